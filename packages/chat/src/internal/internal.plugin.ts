import { ApiError, ChatMessFlags, ChatType, MemberRole, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import { requireKnown } from '../access.ts'
import { MemberView, memberView, memberViews } from '../members/members.plugin.ts'
import { newMemberRow } from '../members/members.repository.ts'
import { recordDeletion } from '../messages/message-rows.ts'
import { Id, MemberId } from '../messages/messages.schema.ts'
import type { Store } from '../store.ts'

export interface InternalPluginOptions {
  store: Store
  hardDelete: boolean
}

const ChatInfo = Type.Object({
  id: Type.String(),
  type: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  owner: Type.String(),
  archived: Type.Boolean(),
  member_count: Type.Integer(),
  last_message: Type.String(),
})
const chatQuery = Type.Object({ chat_id: Id }, { additionalProperties: false })
const addMember = Type.Object(
  { chat_id: Id, member: MemberId, admin: Type.Boolean({ default: false }) },
  { additionalProperties: false },
)
const removeMember = Type.Object({ chat_id: Id, member: MemberId }, { additionalProperties: false })
const deleteMessage = Type.Object(
  { message_id: Id, hard: Type.Boolean({ default: false }) },
  { additionalProperties: false },
)
const listMembers = Type.Object(
  { chat_id: Id, after: Type.Optional(Id), limit: Type.Integer({ minimum: 1, maximum: 1000, default: 500 }) },
  { additionalProperties: false },
)

// System actions are recorded as done by member 0.
const SYSTEM = '0'

/**
 * The chat module's operations for the gateway and core modules (/private/v1): the caller is
 * trusted by its inter-service signature, so there is no membership check, only the chat rules.
 */
export default async function internalPlugin(app: Service, { store, hardDelete }: InternalPluginOptions) {
  async function requireChat(chatId: number, reader: Pick<Store, 'chats'> = store) {
    const chat = await reader.chats.find(chatId)
    if (!chat) throw new ApiError('ChatNotFound', `chat ${chatId} not found`)
    return chat
  }

  app.get('/get_chat_info', { schema: { querystring: chatQuery, response: { 200: ChatInfo } } }, async (request) => {
    const chat = await requireChat(Number(request.query.chat_id))
    return {
      id: String(chat.timetick),
      type: chat.type,
      name: chat.name,
      description: chat.description,
      owner: String(chat.owner),
      archived: chat.archived === 1,
      member_count: await store.members.count(chat.timetick),
      last_message: String(chat.last_message),
    }
  })

  const membersResponse = Type.Object({ members: Type.Array(MemberView), has_more: Type.Boolean() })
  app.get(
    '/get_chat_members',
    { schema: { querystring: listMembers, response: { 200: membersResponse } } },
    async (request) => {
      const chat = await requireChat(Number(request.query.chat_id))
      const { after, limit } = request.query
      const rows = await store.members.list(chat.timetick, after === undefined ? 0 : Number(after), limit + 1)
      return { members: await memberViews(store, rows.slice(0, limit)), has_more: rows.length > limit }
    },
  )

  app.post('/add_member', { schema: { body: addMember, response: { 200: MemberView } } }, async (request) => {
    const member = Number(request.body.member)
    return store.transact(async (unit) => {
      const chat = await requireChat(Number(request.body.chat_id), unit)
      if (chat.type === ChatType.Private)
        throw new ApiError('WrongChatType', 'a private chat has exactly its two participants')
      await requireKnown(unit, [member])
      const role = request.body.admin ? MemberRole.Admin : 0
      const row = newMemberRow(chat.timetick, member, role, store.nextTick())
      if (!(await unit.members.add(row))) return memberView(unit, (await unit.members.find(chat.timetick, member))!)
      const data = { chat_id: String(chat.timetick), member: String(member), role, by: SYSTEM }
      await unit.emit({ chat_id: chat.timetick, type: 'MemberAdded', data, app_id: chat.app_id })
      return memberView(unit, row)
    })
  })

  const removed = Type.Object({ removed: Type.Boolean() })
  app.post('/remove_member', { schema: { body: removeMember, response: { 200: removed } } }, async (request) => {
    const member = Number(request.body.member)
    return store.transact(async (unit) => {
      const chat = await requireChat(Number(request.body.chat_id), unit)
      if (chat.type === ChatType.Private)
        throw new ApiError('WrongChatType', 'a private chat has exactly its two participants')
      const target = await unit.members.find(chat.timetick, member)
      if (!target) return { removed: false }
      if ((target.role & MemberRole.Owner) !== 0) throw new ApiError('NotChatAdmin', 'the owner cannot be removed')
      await unit.members.remove(chat.timetick, member)
      const data = { chat_id: String(chat.timetick), member: String(member), role: target.role, by: SYSTEM }
      await unit.emit({ chat_id: chat.timetick, type: 'MemberRemoved', data, app_id: chat.app_id })
      await unit.emit({ chat_id: chat.timetick, type: 'MemberRemoved', data, addressee: member })
      return { removed: true }
    })
  })

  const deleted = Type.Object({ message_id: Type.String(), hard: Type.Boolean() })
  app.post('/delete_message', { schema: { body: deleteMessage, response: { 200: deleted } } }, async (request) => {
    const { hard } = request.body
    if (hard && !hardDelete) throw new ApiError('HardDeleteDisabled')
    await store.transact(async (unit) => {
      const message = await unit.messages.find(Number(request.body.message_id))
      if (!message) throw new ApiError('MessageNotFound')
      const chat = await requireChat(message.chat_id, unit)
      const alreadyDeleted = (message.flags & ChatMessFlags.Deleted) !== 0
      if (!hard && alreadyDeleted) return
      if (hard) await unit.messages.delete(message.timetick)
      else {
        await unit.messages.update(message.timetick, {
          flags: message.flags | ChatMessFlags.Deleted,
          timetick_update: store.nextTick(),
        })
      }
      await recordDeletion(unit, chat, message.timetick, hard)
    })
    return { message_id: request.body.message_id, hard }
  })
}
