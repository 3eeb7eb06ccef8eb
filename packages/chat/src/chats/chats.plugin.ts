import { ApiError, ChatType, MemberRole, patchOf, type Service } from '@atrium/platform'
import { type Caller, requireAdmin, requireKnown, requireMember, requireUser } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import { type MemberRow, newMemberRow } from '../members/members.repository.ts'
import { sharedRole } from '../members/personal-role.ts'
import type { Store, Unit } from '../store.ts'
import { contextOf } from './chat-context.ts'
import { peerOf, toChatEventData, toChatView } from './chat-view.ts'
import { type ChatRow, newChatRow, pairKey } from './chats.repository.ts'
import {
  archiveChat,
  chatRef,
  createChat,
  createPrivateChat,
  getChatInfo,
  getChats,
  updateChat,
} from './chats.schema.ts'

export interface ChatsPluginOptions {
  store: Store
  resolveCaller: CallerResolver
  /** Whether hard_delete_chat is enabled by configuration. */
  hardDelete: boolean
}

type Reads = Pick<Store, 'members' | 'messages' | 'profiles'>

/** The newest visible messages of these chats with their senders' names: two queries for any number of chats. */
export async function lastMessagesOf(store: Reads, chats: ChatRow[]) {
  const rows = await store.messages.findMany(chats.map((chat) => chat.last_message).filter((id) => id !== 0))
  const names = await store.profiles.names([...new Set(rows.map((row) => row.owner))])
  return new Map(rows.map((row) => [row.timetick, { row, senderName: names.get(row.owner) ?? '' }]))
}

/**
 * The chat as the caller sees it, with member count, the caller's unread count, a private chat's
 * peer name and the newest visible message (read here unless `lastMessages` holds it).
 */
export async function describeChat(
  store: Reads,
  chat: ChatRow,
  membership: MemberRow,
  lastMessages?: Awaited<ReturnType<typeof lastMessagesOf>>,
) {
  const peer = peerOf(chat, membership.member)
  const { customer } = contextOf(chat)
  const [memberCount, unread, names, last] = await Promise.all([
    store.members.count(chat.timetick),
    store.messages.unreadCount(chat.timetick, membership.member, membership.last_read, chat.last_message),
    store.profiles.names([peer, customer].filter((id) => id !== 0)),
    lastMessages ?? lastMessagesOf(store, [chat]),
  ])
  return toChatView(chat, {
    membership,
    memberCount,
    unread,
    peerName: names.get(peer) ?? '',
    customerName: names.get(customer) ?? '',
    lastMessage: last.get(chat.last_message),
  })
}

/** Creates the private chat of a pair, or returns the one they have; concurrent calls get the same chat. */
async function openPrivateChat(store: Store, caller: Caller, peer: number) {
  if (peer === caller.member) throw new ApiError('InvalidRequest', 'a private chat needs another participant')
  const key = pairKey(caller.member, peer)
  return store.transact(async (unit) => {
    await requireKnown(unit, [peer])
    const chat = newChatRow(store.nextTick(), {
      type: ChatType.Private,
      owner: caller.member,
      pair_key: key,
      app_id: caller.appId,
    })
    const created = await unit.chats.insert(chat)
    const stored = created ? chat : await unit.chats.findByPair(key)
    if (!stored) throw new Error(`private chat ${key} neither inserted nor found`)
    if (created) {
      for (const member of [caller.member, peer]) {
        await unit.members.add(newMemberRow(stored.timetick, member, MemberRole.Private, stored.timetick))
      }
      await unit.emit({
        chat_id: stored.timetick,
        type: 'ChatCreated',
        data: toChatEventData(stored),
        app_id: stored.app_id,
      })
    }
    const membership = (await unit.members.find(stored.timetick, caller.member))!
    return { chat: await describeChat(unit, stored, membership), created }
  })
}

async function createGroup(
  store: Store,
  caller: Caller,
  body: { type: number; name?: string; description?: string; members?: string[] },
) {
  if (!body.name) throw new ApiError('InvalidRequest', 'a group or channel needs a name')
  const members = (body.members ?? []).map(Number).filter((id) => id !== caller.member)
  return store.transact(async (unit) => {
    await requireKnown(unit, members)
    const chat = newChatRow(store.nextTick(), {
      type: body.type,
      owner: caller.member,
      name: body.name,
      description: body.description ?? '',
      app_id: caller.appId,
    })
    await unit.chats.insert(chat)
    await unit.members.add(newMemberRow(chat.timetick, caller.member, MemberRole.Owner, chat.timetick))
    for (const member of members) {
      await unit.members.add(newMemberRow(chat.timetick, member, 0, chat.timetick))
    }
    await unit.emit({ chat_id: chat.timetick, type: 'ChatCreated', data: toChatEventData(chat), app_id: chat.app_id })
    const membership = (await unit.members.find(chat.timetick, caller.member))!
    return { chat: await describeChat(unit, chat, membership), created: true }
  })
}

async function recordChatChange(unit: Unit, chat: ChatRow, type: 'ChatUpdated' | 'ChatArchived') {
  await unit.emit({ chat_id: chat.timetick, type, data: toChatEventData(chat), app_id: chat.app_id })
}

/** create_chat, create_private_chat, update_chat, archive_chat, leave_chat, get_chat_info, get_chats, hard_delete_chat. */
export default async function chatsPlugin(app: Service, { store, resolveCaller, hardDelete }: ChatsPluginOptions) {
  app.post('/create_chat', { schema: createChat }, async (request) => {
    const caller = await resolveCaller(request)
    requireUser(caller, 'create chats')
    const { type, peer } = request.body
    if (type === ChatType.Private) {
      if (!peer) throw new ApiError('InvalidRequest', 'a private chat needs peer')
      return openPrivateChat(store, caller, Number(peer))
    }
    return createGroup(store, caller, request.body)
  })

  app.post('/create_private_chat', { schema: createPrivateChat }, async (request) => {
    const caller = await resolveCaller(request)
    requireUser(caller, 'create chats')
    return openPrivateChat(store, caller, Number(request.body.peer))
  })

  app.post('/update_chat', { schema: updateChat }, async (request) => {
    const caller = await resolveCaller(request)
    return store.transact(async (unit) => {
      const access = await requireMember(unit, Number(request.body.chat_id), caller)
      if (access.chat.type === ChatType.Private)
        throw new ApiError('WrongChatType', 'a private chat is named after the other participant')
      requireAdmin(access)
      const changes = patchOf({ name: request.body.name, description: request.body.description })
      const unchanged = Object.entries(changes).every(
        ([key, value]) => access.chat[key as keyof typeof changes] === value,
      )
      if (unchanged) return describeChat(unit, access.chat, access.membership)
      const chat = { ...access.chat, ...changes, timetick_update: store.nextTick() }
      await unit.chats.update(chat.timetick, { ...changes, timetick_update: chat.timetick_update })
      await recordChatChange(unit, chat, 'ChatUpdated')
      return describeChat(unit, chat, access.membership)
    })
  })

  app.post('/archive_chat', { schema: archiveChat }, async (request) => {
    const caller = await resolveCaller(request)
    return store.transact(async (unit) => {
      const access = await requireMember(unit, Number(request.body.chat_id), caller)
      if (access.chat.type !== ChatType.Private) throw new ApiError('WrongChatType', 'only private chats are archived')
      const archived = request.body.archived ? 1 : 0
      if (access.chat.archived === archived) return describeChat(unit, access.chat, access.membership)
      const chat = { ...access.chat, archived, timetick_update: store.nextTick() }
      await unit.chats.update(chat.timetick, { archived, timetick_update: chat.timetick_update })
      await recordChatChange(unit, chat, 'ChatArchived')
      return describeChat(unit, chat, access.membership)
    })
  })

  app.post('/leave_chat', { schema: chatRef }, async (request) => {
    const caller = await resolveCaller(request)
    await store.transact(async (unit) => {
      const { chat, membership } = await requireMember(unit, Number(request.body.chat_id), caller)
      if (chat.type === ChatType.Private) throw new ApiError('WrongChatType', 'a private chat is archived, not left')
      const tick = store.nextTick()
      // An owner who leaves hands the chat to the oldest admin, or else the oldest member.
      if ((membership.role & MemberRole.Owner) !== 0) {
        const heir = await unit.members.successor(chat.timetick, caller.member, MemberRole.Admin)
        if (heir) {
          const role = heir.role | MemberRole.Owner
          await unit.members.setRole(chat.timetick, heir.member, role, tick)
          await unit.chats.update(chat.timetick, { owner: heir.member, timetick_update: tick })
          // Chat-wide events leave out a member's own list state (members/personal-role.ts).
          const shared = sharedRole(role)
          const data = {
            chat_id: String(chat.timetick),
            member: String(heir.member),
            role: shared,
            by: String(caller.member),
          }
          await unit.emit({ chat_id: chat.timetick, type: 'MemberUpdated', data, app_id: chat.app_id })
        }
      }
      await unit.members.remove(chat.timetick, caller.member)
      // The chat-wide event leaves out the leaver's own list state; their own keeps it.
      const removed = (role: number) => ({
        chat_id: String(chat.timetick),
        member: String(caller.member),
        role,
        by: String(caller.member),
      })
      const everyone = removed(sharedRole(membership.role))
      await unit.emit({ chat_id: chat.timetick, type: 'MemberRemoved', data: everyone, app_id: chat.app_id })
      const own = removed(membership.role)
      await unit.emit({ chat_id: chat.timetick, type: 'MemberRemoved', data: own, addressee: caller.member })
    })
    return { chat_id: request.body.chat_id }
  })

  app.get('/get_chat_info', { schema: getChatInfo }, async (request) => {
    const caller = await resolveCaller(request)
    const { chat, membership } = await requireMember(store, Number(request.query.chat_id), caller)
    return describeChat(store, chat, membership)
  })

  app.get('/get_chats', { schema: getChats }, async (request) => {
    const caller = await resolveCaller(request)
    const { include_hidden, include_archived } = request.query
    // Read before the list, so the list holds every event up to it (a client resumes its stream from here).
    const tick = await store.events.head()
    const memberships = (await store.members.memberships(caller.member)).filter(
      (membership) => include_hidden || (membership.role & MemberRole.Hidden) === 0,
    )
    const chats = new Map(
      (await store.chats.findMany(memberships.map((m) => m.chat_id))).map((chat) => [chat.timetick, chat]),
    )
    const listed = memberships.filter((membership) => include_archived || chats.get(membership.chat_id)?.archived === 0)
    // A fixed number of queries however many chats the caller has (no query per chat).
    const read = listed.map((membership) => chats.get(membership.chat_id)!)
    const peers = listed.map((membership) => peerOf(chats.get(membership.chat_id)!, caller.member))
    const customers = read.map((chat) => contextOf(chat).customer)
    const [lastMessages, memberCounts, unreadCounts, names] = await Promise.all([
      lastMessagesOf(store, read),
      store.members.countMany(read.map((chat) => chat.timetick)),
      store.messages.unreadCounts(caller.member),
      store.profiles.names([...new Set([...peers, ...customers].filter((id) => id !== 0))]),
    ])
    // A message that lands between reading the chats and counting is counted: its chat's view names
    // it as the last message, so that a client adding the message's event to the count sees that
    // it is already in it.
    const rows = read.map((chat) => {
      const newest = unreadCounts.get(chat.timetick)?.newest ?? 0
      return newest > chat.last_message ? { ...chat, last_message: newest } : chat
    })
    const moved = rows.filter((chat, index) => chat !== read[index])
    if (moved.length > 0) for (const [id, last] of await lastMessagesOf(store, moved)) lastMessages.set(id, last)
    const views = listed.map((membership, index) => {
      const chat = rows[index]!
      return toChatView(chat, {
        membership,
        memberCount: memberCounts.get(chat.timetick) ?? 0,
        unread: unreadCounts.get(chat.timetick)?.unread ?? 0,
        peerName: names.get(peers[index]!) ?? '',
        customerName: names.get(customers[index]!) ?? '',
        lastMessage: lastMessages.get(chat.last_message),
      })
    })
    // Pinned chats first, then by newest message (or creation for chats without messages).
    const recency = (view: (typeof views)[number]) => Math.max(Number(view.last_message), Number(view.id))
    views.sort((a, b) => Number(b.pinned) - Number(a.pinned) || recency(b) - recency(a))
    return { chats: views, tick }
  })

  app.post('/hard_delete_chat', { schema: chatRef }, async (request) => {
    const caller = await resolveCaller(request)
    if (!hardDelete) throw new ApiError('HardDeleteDisabled')
    await store.transact(async (unit) => {
      const { chat, membership } = await requireMember(unit, Number(request.body.chat_id), caller)
      if (chat.type !== ChatType.Group) throw new ApiError('WrongChatType', 'only group chats are hard-deleted')
      if ((membership.role & MemberRole.Owner) === 0)
        throw new ApiError('NotChatAdmin', 'only the owner deletes a group')
      await unit.messages.deleteChat(chat.timetick)
      // The members are gone after this, so each former member gets the event addressed to them.
      // The first row also carries the chat's app, so the app is told once.
      for (const [index, former] of (await unit.members.removeAll(chat.timetick)).entries()) {
        await unit.emit({
          chat_id: chat.timetick,
          type: 'ChatDeleted',
          data: { chat_id: String(chat.timetick) },
          addressee: former.member,
          app_id: index === 0 ? chat.app_id : 0,
        })
      }
      await unit.chats.delete(chat.timetick)
    })
    return { chat_id: request.body.chat_id }
  })
}
