import { ApiError, ChatMessFlags, hasFlag, LinkKind } from '@atrium/platform'
import type { Caller } from '../access.ts'
import { requireMember } from '../access.ts'
import type { Store, Unit } from '../store.ts'
import { toMessageEventData, toMessageView } from './message-view.ts'
import type { MessageRow, ReactionSummary } from './messages.repository.ts'

/** A visible message of a chat the caller belongs to, with that chat and membership. */
export async function requireMessage(
  unit: Pick<Unit, 'chats' | 'members' | 'messages'>,
  messageId: number,
  caller: Caller,
) {
  const message = await unit.messages.find(messageId)
  if (!message || hasFlag(message.flags, ChatMessFlags.WidgetCommand)) {
    throw new ApiError('MessageNotFound', `message ${messageId} not found`)
  }
  const access = await requireMember(unit, message.chat_id, caller).catch(() => {
    throw new ApiError('MessageNotFound', `message ${messageId} not found`)
  })
  return { message, ...access }
}

/**
 * Messages shaped for clients with their reactions and reply previews, in two queries (one when
 * the reactions were read already).
 */
export async function toMessageViews(
  store: Pick<Store, 'messages'>,
  rows: MessageRow[],
  member: number,
  known?: { reactions: ReactionSummary[] },
) {
  const replyIds = rows.filter((row) => row.link_kind === LinkKind.Reply).map((row) => row.linked_message_id)
  const [reactions, replies] = await Promise.all([
    known?.reactions ??
      store.messages.reactions(
        rows.map((row) => row.timetick),
        member,
      ),
    store.messages.findMany([...new Set(replyIds)]),
  ])
  const replyById = new Map(replies.map((reply) => [reply.timetick, reply]))
  return rows.map((row) =>
    toMessageView(row, {
      reactions,
      replyTo: row.link_kind === LinkKind.Reply ? replyById.get(row.linked_message_id) : undefined,
    }),
  )
}

/** A new message row of the chat by the owner, with every other column at its default. */
export function newMessage(store: Store, chatId: number, owner: number, fields: Partial<MessageRow>): MessageRow {
  const tick = store.nextTick()
  return {
    timetick: tick,
    timetick_update: tick,
    chat_id: chatId,
    owner,
    content: '',
    file_id: 0,
    file_name: '',
    file_size: 0,
    file_type: '',
    flags: 0,
    linked_message_id: 0,
    link_kind: LinkKind.None,
    forwarded_from: 0,
    edited: 0,
    ...fields,
  }
}

/** Records a new visible message: the row, the chat's newest message, the sender's read marker and the event. */
export async function postMessage(unit: Unit, row: MessageRow, appId: number): Promise<void> {
  await unit.messages.insert(row)
  await unit.chats.touchLastMessage(row.chat_id, row.timetick, row.timetick)
  await unit.members.markRead(row.chat_id, row.owner, row.timetick, row.timetick)
  await unit.emit({ chat_id: row.chat_id, type: 'NewChatMessage', data: toMessageEventData(row), app_id: appId })
}

type ChatRef = { timetick: number; last_message: number; app_id: number }

/**
 * Records that a message was deleted (soft or hard): the chat's last_message moves back to its
 * newest visible message when it pointed at this one, and MessageDeleted goes to the chat.
 */
export async function recordDeletion(unit: Unit, chat: ChatRef, messageId: number, hard: boolean): Promise<void> {
  if (chat.last_message === messageId) {
    await unit.chats.setLastMessage(
      chat.timetick,
      await unit.messages.newestVisible(chat.timetick, Number.MAX_SAFE_INTEGER),
    )
  }
  const data = { message_id: String(messageId), chat_id: String(chat.timetick), hard }
  await unit.emit({ chat_id: chat.timetick, type: 'MessageDeleted', data, app_id: chat.app_id })
}
