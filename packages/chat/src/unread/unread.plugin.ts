import { ApiError, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import { requireMember } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import { toMessageViews } from '../messages/message-rows.ts'
import { MessageView } from '../messages/message-view.ts'
import { Id } from '../messages/messages.schema.ts'
import type { Store } from '../store.ts'

export interface UnreadPluginOptions {
  store: Store
  resolveCaller: CallerResolver
}

const READ_EVENT_IDS = 100

const getUnreadMessages = {
  querystring: Type.Object(
    { chat_id: Type.Optional(Id), limit: Type.Integer({ minimum: 0, maximum: 200, default: 20 }) },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      total: Type.Integer(),
      chats: Type.Array(
        Type.Object({
          chat_id: Type.String(),
          unread: Type.Integer(),
          last_read: Type.String(),
          messages: Type.Array(MessageView),
        }),
      ),
    }),
  },
}

const markRead = {
  body: Type.Object({ chat_id: Id, message_id: Type.Optional(Id) }, { additionalProperties: false }),
  response: { 200: Type.Object({ chat_id: Type.String(), last_read: Type.String(), unread: Type.Integer() }) },
}

/**
 * get_unread_messages and mark_read. Unread counts are computed from each member's read marker
 * when asked, so they are exact under concurrent sends and reads; the marker only moves forward.
 */
export default async function unreadPlugin(app: Service, { store, resolveCaller }: UnreadPluginOptions) {
  app.get('/get_unread_messages', { schema: getUnreadMessages }, async (request) => {
    const caller = await resolveCaller(request)
    const { chat_id, limit } = request.query
    const memberships =
      chat_id === undefined
        ? await store.members.memberships(caller.member)
        : [(await requireMember(store, Number(chat_id), caller)).membership]
    const chats = await Promise.all(
      memberships.map(async (membership) => {
        const [unread, rows] = await Promise.all([
          store.messages.unreadCount(membership.chat_id, caller.member, membership.last_read),
          limit === 0 ? [] : store.messages.unread(membership.chat_id, caller.member, membership.last_read, limit),
        ])
        return {
          chat_id: String(membership.chat_id),
          unread,
          last_read: String(membership.last_read),
          messages: await toMessageViews(store, rows, caller.member),
        }
      }),
    )
    const withUnread = chats.filter((chat) => chat.unread > 0)
    return { total: withUnread.reduce((sum, chat) => sum + chat.unread, 0), chats: withUnread }
  })

  app.post('/mark_read', { schema: markRead }, async (request) => {
    const caller = await resolveCaller(request)
    const chatId = Number(request.body.chat_id)
    return store.transact(async (unit) => {
      const { chat, membership } = await requireMember(unit, chatId, caller)
      let upTo = Number.MAX_SAFE_INTEGER
      if (request.body.message_id !== undefined) {
        const named = await unit.messages.find(Number(request.body.message_id))
        if (named?.chat_id !== chatId) throw new ApiError('MessageNotFound', 'the message is not in this chat')
        upTo = named.timetick
      }
      const newest = await unit.messages.newestVisible(chatId, upTo)
      const newlyRead = await unit.messages.unread(chatId, caller.member, membership.last_read, READ_EVENT_IDS)
      if (await unit.members.markRead(chatId, caller.member, newest, store.nextTick())) {
        await unit.emit({
          chat_id: chatId,
          type: 'MessageRead',
          data: {
            chat_id: String(chatId),
            reader: String(caller.member),
            last_read_id: String(newest),
            message_ids: newlyRead.filter((row) => row.timetick <= newest).map((row) => String(row.timetick)),
          },
          app_id: chat.app_id,
        })
      }
      const marker = Math.max(newest, membership.last_read)
      return {
        chat_id: String(chatId),
        last_read: String(marker),
        unread: await unit.messages.unreadCount(chatId, caller.member, marker),
      }
    })
  })
}
