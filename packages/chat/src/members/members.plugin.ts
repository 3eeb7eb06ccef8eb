import {
  ApiError,
  ChatType,
  MemberRole,
  patchOf,
  type Service,
  shownName,
  timetickTime,
  withFlag,
} from '@atrium/platform'
import { Type } from 'typebox'
import { type Caller, type Membership, requireAdmin, requireKnown, requireMember } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import { Id, MemberId } from '../messages/messages.schema.ts'
import type { Store, Unit } from '../store.ts'
import { type MemberRow, newMemberRow } from './members.repository.ts'
import { currentRole, parseMuteEnd, sharedRole } from './personal-role.ts'

export interface MembersPluginOptions {
  store: Store
  resolveCaller: CallerResolver
}

export const MemberView = Type.Object({
  member: Type.String(),
  name: Type.String({ description: 'The name others see (docs/people.md): the display name or "User 1234".' }),
  role: Type.Integer({ description: 'MemberRole flags.' }),
  owner: Type.Boolean(),
  admin: Type.Boolean(),
  joined: Type.String(),
  last_read: Type.String(),
})

/**
 * Shapes a membership for clients, named by the member's profile. Shown to another member
 * (`viewer`), it leaves out the list state: who pinned, hid or muted a chat is their own business.
 */
export function toMemberView(row: MemberRow, name: string | undefined, viewer?: number) {
  const role = currentRole(row, Date.now())
  return {
    member: String(row.member),
    name: shownName(row.member, name),
    role: viewer === undefined || viewer === row.member ? role : sharedRole(role),
    owner: (row.role & MemberRole.Owner) !== 0,
    admin: (row.role & MemberRole.Admin) !== 0,
    joined: new Date(timetickTime(row.joined)).toISOString(),
    last_read: String(row.last_read),
  }
}

const addMember = {
  body: Type.Object(
    { chat_id: Id, member: MemberId, admin: Type.Boolean({ default: false }) },
    { additionalProperties: false },
  ),
  response: { 200: MemberView },
}
const removeMember = {
  body: Type.Object({ chat_id: Id, member: MemberId }, { additionalProperties: false }),
  response: { 200: Type.Object({ chat_id: Type.String(), member: Type.String() }) },
}
const Flag = Type.Optional(Type.Union([Type.Boolean(), Type.Null()]))
const updateMember = {
  body: Type.Object(
    {
      chat_id: Id,
      member: Type.Optional(MemberId),
      admin: Flag,
      pinned: Flag,
      hidden: Flag,
      muted: Flag,
      muted_until: Type.Optional(
        Type.String({
          maxLength: 40,
          description: 'Mutes the chat until this time (ISO 8601 with its zone, at most 366 days ahead).',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: MemberView },
}
const getChatMembers = {
  querystring: Type.Object(
    { chat_id: Id, after: Type.Optional(Id), limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }) },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({ members: Type.Array(MemberView), member_count: Type.Integer(), has_more: Type.Boolean() }),
  },
}

type NameReader = Pick<Store, 'profiles'> | Pick<Unit, 'profiles'>

/** Memberships shaped for clients, with their members' names read in one query; `viewer` as in toMemberView. */
export async function memberViews(reader: NameReader, rows: MemberRow[], viewer?: number) {
  const names = await reader.profiles.names(rows.map((row) => row.member))
  return rows.map((row) => toMemberView(row, names.get(row.member), viewer))
}

/** One membership shaped for clients. */
export async function memberView(reader: NameReader, row: MemberRow, viewer?: number) {
  return (await memberViews(reader, [row], viewer))[0]!
}

async function memberEvent(
  unit: Unit,
  { chat }: Membership,
  type: 'MemberAdded' | 'MemberRemoved' | 'MemberUpdated',
  row: MemberRow,
  by: Caller,
  only?: number,
) {
  await unit.emit({
    chat_id: chat.timetick,
    type,
    data: {
      chat_id: String(chat.timetick),
      member: String(row.member),
      // An event for the whole chat leaves out the member's own list state, as toMemberView does.
      role: only === row.member ? row.role : sharedRole(row.role),
      by: String(by.member),
    },
    app_id: only === undefined ? chat.app_id : 0,
    addressee: only,
  })
}

function requireGroupLike(access: Membership) {
  if (access.chat.type === ChatType.Private)
    throw new ApiError('WrongChatType', 'a private chat has exactly its two participants')
}

/** add_chat_member, remove_member, update_member, get_chat_members. */
export default async function membersPlugin(app: Service, { store, resolveCaller }: MembersPluginOptions) {
  app.post('/add_chat_member', { schema: addMember }, async (request) => {
    const caller = await resolveCaller(request)
    return store.transact(async (unit) => {
      const access = await requireMember(unit, Number(request.body.chat_id), caller)
      requireGroupLike(access)
      requireAdmin(access)
      await requireKnown(unit, [Number(request.body.member)])
      const role = request.body.admin ? MemberRole.Admin : 0
      const row = newMemberRow(access.chat.timetick, Number(request.body.member), role, store.nextTick())
      if (!(await unit.members.add(row))) {
        return memberView(unit, (await unit.members.find(row.chat_id, row.member))!, caller.member)
      }
      await memberEvent(unit, access, 'MemberAdded', row, caller)
      return memberView(unit, row, caller.member)
    })
  })

  app.post('/remove_member', { schema: removeMember }, async (request) => {
    const caller = await resolveCaller(request)
    await store.transact(async (unit) => {
      const access = await requireMember(unit, Number(request.body.chat_id), caller)
      requireGroupLike(access)
      requireAdmin(access)
      const target = await unit.members.find(access.chat.timetick, Number(request.body.member))
      if (!target) throw new ApiError('NotFound', `member ${request.body.member} is not in the chat`)
      if ((target.role & MemberRole.Owner) !== 0) throw new ApiError('NotChatAdmin', 'the owner cannot be removed')
      const callerIsOwner = (access.membership.role & MemberRole.Owner) !== 0
      if ((target.role & MemberRole.Admin) !== 0 && !callerIsOwner && target.member !== caller.member) {
        throw new ApiError('NotChatAdmin', 'only the owner removes an admin')
      }
      await unit.members.remove(target.chat_id, target.member)
      await memberEvent(unit, access, 'MemberRemoved', target, caller)
      await memberEvent(unit, access, 'MemberRemoved', target, caller, target.member)
    })
    return { chat_id: request.body.chat_id, member: request.body.member }
  })

  app.post('/update_member', { schema: updateMember }, async (request) => {
    const caller = await resolveCaller(request)
    const { admin, pinned, hidden, muted, muted_until } = request.body
    if (muted_until !== undefined && muted === false) {
      throw new ApiError('InvalidRequest', 'muted_until ends a mute: give it without muted, or with muted true')
    }
    const mutedUntil = muted_until === undefined ? undefined : parseMuteEnd(muted_until, Date.now())
    const targetId = request.body.member === undefined ? caller.member : Number(request.body.member)
    return store.transact(async (unit) => {
      const access = await requireMember(unit, Number(request.body.chat_id), caller)
      const target = await unit.members.find(access.chat.timetick, targetId)
      if (!target) throw new ApiError('NotFound', `member ${targetId} is not in the chat`)
      const listState = patchOf({ pinned, hidden, muted: mutedUntil === undefined ? muted : true })
      if (Object.keys(listState).length > 0 && targetId !== caller.member) {
        throw new ApiError('Forbidden', 'pinned, hidden and muted are set by each member for themselves')
      }
      let role = currentRole(target, Date.now())
      if (listState.pinned !== undefined) role = withFlag(role, MemberRole.Pinned, listState.pinned)
      if (listState.hidden !== undefined) role = withFlag(role, MemberRole.Hidden, listState.hidden)
      if (listState.muted !== undefined) role = withFlag(role, MemberRole.Muted, listState.muted)
      if (admin !== undefined && admin !== null) {
        requireGroupLike(access)
        requireAdmin(access)
        if ((target.role & MemberRole.Owner) !== 0)
          throw new ApiError('NotChatAdmin', "the owner's role does not change")
        // Demoting another admin is removing an admin: only the owner may (an admin may step down).
        const demotesOther = !admin && (target.role & MemberRole.Admin) !== 0 && target.member !== caller.member
        if (demotesOther && (access.membership.role & MemberRole.Owner) === 0) {
          throw new ApiError('NotChatAdmin', 'only the owner demotes an admin')
        }
        role = withFlag(role, MemberRole.Admin, admin)
      }
      // A mute sets its end (none unless given); an unmute clears it; otherwise it stays.
      const muteEnd = listState.muted === undefined ? target.muted_until : listState.muted ? (mutedUntil ?? 0) : 0
      if (role === target.role && muteEnd === target.muted_until) return memberView(unit, target, caller.member)
      const updated = { ...target, role, muted_until: muteEnd, timetick_update: store.nextTick() }
      await unit.members.setRole(target.chat_id, target.member, role, updated.timetick_update, muteEnd)
      // A change of admin concerns everyone; pinning, hiding and muting only the member's own list.
      const adminChanged = ((role ^ target.role) & MemberRole.Admin) !== 0
      await memberEvent(unit, access, 'MemberUpdated', updated, caller, adminChanged ? undefined : caller.member)
      return memberView(unit, updated, caller.member)
    })
  })

  app.get('/get_chat_members', { schema: getChatMembers }, async (request) => {
    const caller = await resolveCaller(request)
    const { chat_id, after, limit } = request.query
    const { chat } = await requireMember(store, Number(chat_id), caller)
    const [rows, memberCount] = await Promise.all([
      store.members.list(chat.timetick, after === undefined ? 0 : Number(after), limit + 1),
      store.members.count(chat.timetick),
    ])
    return {
      members: await memberViews(store, rows.slice(0, limit), caller.member),
      member_count: memberCount,
      has_more: rows.length > limit,
    }
  })
}
