import type { MessageView } from '../../api/chat-types.ts'
import type { BroadcastEvent } from '../../live-events.ts'
import { compareIds } from '../chat-list/chat-list-state.ts'
import { applyMessageEvent } from './message-events.ts'

/** The loaded part of one chat's history, oldest message first. */
export interface ConversationState {
  messages: MessageView[]
  /** Older messages exist on the server (the last `before` page said has_more). */
  hasOlder: boolean
  loaded: boolean
}

export { PAGE } from './page-size.ts'

export const EMPTY_CONVERSATION: ConversationState = { messages: [], hasOlder: false, loaded: false }

/** Messages merged by id, oldest first; of two views of one message the later update wins. */
export function mergeMessages(known: MessageView[], incoming: MessageView[]): MessageView[] {
  const byId = new Map(known.map((message) => [message.id, message]))
  for (const message of incoming) {
    const current = byId.get(message.id)
    if (!current || compareIds(message.timetick_update, current.timetick_update) >= 0) byId.set(message.id, message)
  }
  return [...byId.values()].sort((a, b) => compareIds(a.id, b.id))
}

export type ConversationAction =
  /**
   * The first page of a chat (get_chat_messages without a cursor, newest first). Messages already
   * held stay: one sent, or caught up, while the page was on its way is newer than the page.
   */
  | { type: 'latest'; messages: MessageView[]; hasMore: boolean }
  /** An older page (`before`, newest first). */
  | { type: 'older'; messages: MessageView[]; hasMore: boolean }
  /** Newer messages (`after`), a sent message, or any fresher view of loaded ones. */
  | { type: 'newer'; messages: MessageView[] }
  /** A live edit, deletion, pin or reaction of this chat, applied to the loaded messages. */
  | { type: 'event'; event: BroadcastEvent; me: string }

export function conversationReducer(state: ConversationState, action: ConversationAction): ConversationState {
  switch (action.type) {
    case 'latest':
      return { messages: mergeMessages(state.messages, action.messages), hasOlder: action.hasMore, loaded: true }
    case 'older':
      return { ...state, messages: mergeMessages(state.messages, action.messages), hasOlder: action.hasMore }
    case 'newer':
      return { ...state, messages: mergeMessages(state.messages, action.messages) }
    case 'event': {
      const messages = applyMessageEvent(state.messages, action.event, action.me)
      return messages === state.messages ? state : { ...state, messages }
    }
  }
}

/** The newest loaded message id, the `after` cursor for catching up. */
export function newestId(state: ConversationState): string | undefined {
  return state.messages.at(-1)?.id
}

/**
 * Whether the chat list knows a newer message than the conversation holds: its first page was read
 * before that message was sent, and the list after it (both are read in parallel at page start),
 * so no live event of it will come. `lastMessage` is the list's `last_message` ("0" for none).
 */
export function behindList(state: ConversationState, lastMessage: string): boolean {
  if (lastMessage === '0') return false
  const newest = newestId(state)
  return newest === undefined || compareIds(lastMessage, newest) > 0
}

/** The oldest loaded message id, the `before` cursor for paging back. */
export function oldestId(state: ConversationState): string | undefined {
  return state.messages[0]?.id
}
