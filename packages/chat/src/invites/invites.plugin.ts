import { randomBytes } from 'node:crypto'
import { ApiError, ChatType, MemberRole, readIdentity, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import { isChatAdmin, requireAdmin, requireMember, requireUser } from '../access.ts'
import { type CallerResolver, deviceGuidOf } from '../caller.ts'
import { ChatView, toChatEventData } from '../chats/chat-view.ts'
import { describeChat } from '../chats/chats.plugin.ts'
import { newChatRow, pairKey } from '../chats/chats.repository.ts'
import { newMemberRow } from '../members/members.repository.ts'
import { Id } from '../messages/messages.schema.ts'
import type { Store, Unit } from '../store.ts'
import { type GuestRow, InviteKind, type InviteRow } from './invites.repository.ts'

export interface InvitesPluginOptions {
  store: Store
  resolveCaller: CallerResolver
}

const Code = Type.String({ pattern: '^[A-Za-z0-9]{8,64}$' })
const KIND_NAMES = { [InviteKind.Personal]: 'personal', [InviteKind.Group]: 'group' } as const

const InviteView = Type.Object({
  code: Type.String(),
  kind: Type.Union([Type.Literal('personal'), Type.Literal('group')]),
  chat_id: Type.String(),
  path: Type.String({ description: 'Client route that opens the invite.' }),
})

const createInvite = {
  body: Type.Object(
    { kind: Type.Union([Type.Literal('personal'), Type.Literal('group')]), chat_id: Type.Optional(Id) },
    { additionalProperties: false },
  ),
  response: { 200: InviteView },
}
const joinInvite = {
  body: Type.Object({ code: Code }, { additionalProperties: false }),
  response: {
    200: Type.Object({
      member: Type.String({ description: 'The caller as a chat member: the guest id for guests.' }),
      guest: Type.Boolean(),
      kind: Type.Union([Type.Literal('personal'), Type.Literal('group')]),
      calls_allowed: Type.Boolean(),
      chat: ChatView,
    }),
  },
}
const revokeInvite = {
  body: Type.Object({ code: Code }, { additionalProperties: false }),
  response: { 200: Type.Object({ code: Type.String() }) },
}

function toInviteView(invite: InviteRow) {
  return {
    code: invite.code,
    kind: KIND_NAMES[invite.kind as keyof typeof KIND_NAMES],
    chat_id: String(invite.chat_id),
    path: `/chat?code=${invite.code}`,
  }
}

// 96 random bits in base62-ish letters: codes are capabilities, so they must not be guessable.
function newCode(): string {
  return randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')
}

async function joinAsMember(unit: Unit, chatId: number, member: number, tick: number) {
  const chat = await unit.chats.find(chatId)
  if (!chat) throw new ApiError('InviteNotFound', 'the chat of this invite no longer exists')
  const added = await unit.members.add(newMemberRow(chatId, member, 0, tick))
  if (added) {
    const data = { chat_id: String(chatId), member: String(member), role: 0, by: String(member) }
    await unit.emit({ chat_id: chatId, type: 'MemberAdded', data, app_id: chat.app_id })
  }
}

/**
 * Resolves a guest device to its synthetic identity, creating it on first use: for a personal
 * invite, a private conversation of its own with the inviter; for a group invite, membership of
 * the chat. The same code on the same device always returns the same guest and conversation.
 * Runs in the caller's transaction (the email bridge admits mail senders the same way).
 */
export async function admitGuest(
  unit: Unit,
  nextTick: () => number,
  invite: InviteRow,
  deviceGuid: string,
): Promise<GuestRow> {
  const tick = nextTick()
  const guest: GuestRow = { timetick: tick, code: invite.code, device_guid: deviceGuid, chat_id: invite.chat_id }
  if (!(await unit.invites.insertGuest(guest))) {
    const known = (await unit.invites.findGuest(invite.code, deviceGuid))!
    // A guest who left a group comes back through the same invite.
    if (invite.kind === InviteKind.Group) await joinAsMember(unit, invite.chat_id, known.timetick, nextTick())
    return known
  }
  if (invite.kind === InviteKind.Personal) {
    const chat = newChatRow(nextTick(), {
      type: ChatType.Private,
      owner: invite.created_by,
      pair_key: pairKey(invite.created_by, guest.timetick),
    })
    await unit.chats.insert(chat)
    for (const member of [invite.created_by, guest.timetick]) {
      await unit.members.add(newMemberRow(chat.timetick, member, MemberRole.Private, chat.timetick))
    }
    await unit.invites.setGuestChat(guest.timetick, chat.timetick)
    await unit.emit({ chat_id: chat.timetick, type: 'ChatCreated', data: toChatEventData(chat) })
    return { ...guest, chat_id: chat.timetick }
  }
  await joinAsMember(unit, invite.chat_id, tick, tick)
  return guest
}

function joinAsGuest(store: Store, invite: InviteRow, deviceGuid: string): Promise<GuestRow> {
  return store.transact((unit) => admitGuest(unit, store.nextTick, invite, deviceGuid))
}

/** create_invite, join_invite, revoke_invite. */
export default async function invitesPlugin(app: Service, { store, resolveCaller }: InvitesPluginOptions) {
  app.post('/create_invite', { schema: createInvite }, async (request) => {
    const caller = await resolveCaller(request)
    requireUser(caller, 'create invites')
    const kind = request.body.kind === 'group' ? InviteKind.Group : InviteKind.Personal
    let chatId = 0
    if (kind === InviteKind.Group) {
      if (!request.body.chat_id) throw new ApiError('InvalidRequest', 'a group invite needs chat_id')
      const access = await requireMember(store, Number(request.body.chat_id), caller)
      if (access.chat.type === ChatType.Private) throw new ApiError('WrongChatType', 'invite to a group or channel')
      requireAdmin(access)
      chatId = access.chat.timetick
    }
    const invite: InviteRow = {
      code: newCode(),
      timetick: store.nextTick(),
      chat_id: chatId,
      kind,
      created_by: caller.member,
      revoked: 0,
    }
    await store.invites.insert(invite)
    return toInviteView(invite)
  })

  app.post('/join_invite', { schema: joinInvite }, async (request) => {
    const invite = await store.invites.find(request.body.code)
    if (!invite) throw new ApiError('InviteNotFound')
    const callsAllowed = invite.kind === InviteKind.Personal
    const kind = KIND_NAMES[invite.kind as keyof typeof KIND_NAMES]
    if (readIdentity(request).crmId === 0) {
      const deviceGuid = deviceGuidOf(request)
      if (!deviceGuid)
        throw new ApiError('InvalidRequest', 'a guest joins with an X-Device-Guid header (8–64 letters, digits or -)')
      const guest = await joinAsGuest(store, invite, deviceGuid)
      const { chat, membership } = await requireMember(store, guest.chat_id, {
        member: guest.timetick,
        guest: true,
        appId: 0,
      })
      return {
        member: String(guest.timetick),
        guest: true,
        kind,
        calls_allowed: callsAllowed,
        chat: await describeChat(store, chat, membership),
      }
    }
    const caller = await resolveCaller(request)
    if (invite.kind === InviteKind.Personal) {
      throw new ApiError(
        'WrongChatType',
        'a personal invite is for guests; open a private chat with its creator instead',
      )
    }
    await store.transact((unit) => joinAsMember(unit, invite.chat_id, caller.member, store.nextTick()))
    const { chat, membership } = await requireMember(store, invite.chat_id, caller)
    return {
      member: String(caller.member),
      guest: false,
      kind,
      calls_allowed: false,
      chat: await describeChat(store, chat, membership),
    }
  })

  app.post('/revoke_invite', { schema: revokeInvite }, async (request) => {
    const caller = await resolveCaller(request)
    const invite = await store.invites.find(request.body.code)
    if (!invite) throw new ApiError('InviteNotFound')
    const admin =
      invite.chat_id !== 0 && isChatAdmin((await store.members.find(invite.chat_id, caller.member))?.role ?? 0)
    if (invite.created_by !== caller.member && !admin)
      throw new ApiError('Forbidden', 'only its creator or a chat admin revokes an invite')
    await store.invites.revoke(invite.code)
    return { code: invite.code }
  })
}
