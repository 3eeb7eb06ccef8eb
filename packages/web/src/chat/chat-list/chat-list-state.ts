import type { ChatView } from '../../api/chat-types.ts'
import type { BroadcastEvent } from '../../live-events.ts'
import { ChatType } from '../message/names.ts'
import { isMutedNow } from '../mute.ts'
import { PREVIEW_LENGTH, previewOfEvent } from './last-message.ts'

/** The chat list as the messenger keeps it between server answers and live events. */
export interface ChatListState {
  chats: ChatView[]
  /** The first get_chats answer arrived. */
  loaded: boolean
  /** Chats whose view must be fetched again (get_chat_info), e.g. after ChatCreated or a read elsewhere. */
  refetch: string[]
  /** The whole list must be fetched again (an event of an unknown chat, or a resync). */
  reload: boolean
  /** How many chat events were applied: a request notes it, and its answer is brought up to date (`since`). */
  seq: number
  /** The last LOG_MAX chat events applied, numbered by `seq`. */
  log: LoggedEvent[]
}

type EventAction = { type: 'event'; event: BroadcastEvent; me: string; openChatId: string | undefined }
type LoggedEvent = EventAction & { seq: number }

/** Chat events kept to bring a late answer up to date; an answer older than these reloads instead. */
const LOG_MAX = 200

export type ChatListAction =
  /** `since`: the state's `seq` when the answer was asked for; events applied after it are applied again on it. */
  | { type: 'loaded'; chats: ChatView[]; since?: number }
  | { type: 'upsert'; chat: ChatView; since?: number }
  | { type: 'remove'; chatId: string }
  | { type: 'read'; chatId: string; unread: number }
  | { type: 'refetched'; chatIds: string[] }
  | { type: 'resync' }
  | EventAction

export const EMPTY_CHAT_LIST: ChatListState = { chats: [], loaded: false, refetch: [], reload: false, seq: 0, log: [] }

/** Unread messages in chats that are not muted now: the count a tab title shows. */
export function unreadOutsideMuted(chats: readonly ChatView[], now = Date.now()): number {
  return chats.reduce((sum, chat) => (isMutedNow(chat, now) ? sum : sum + chat.unread), 0)
}

/** The chat a `/chat/c/{id}` path names: by chat id, or a private chat by its peer's CRM id. */
export function findChat(chats: ChatView[], chatId: string | undefined): ChatView | undefined {
  if (!chatId) return undefined
  return (
    chats.find((chat) => chat.id === chatId) ??
    chats.find((chat) => chat.type === ChatType.Private && chat.peer === chatId)
  )
}

/** Ids are timeticks: numbers below 2^53 written as decimal strings. */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)
}

/** The server's order: pinned chats first, then by newest message, or creation for chats without one. */
export function orderChats(chats: ChatView[]): ChatView[] {
  const activity = (chat: ChatView) => (chat.last_message === '0' ? chat.id : chat.last_message)
  return [...chats].sort((a, b) => Number(b.pinned) - Number(a.pinned) || compareIds(activity(b), activity(a)))
}

function withChat(state: ChatListState, chat: ChatView): ChatListState {
  const others = state.chats.filter((known) => known.id !== chat.id)
  return { ...state, chats: orderChats([...others, chat]) }
}

function refetching(state: ChatListState, chatId: string): ChatListState {
  return state.refetch.includes(chatId) ? state : { ...state, refetch: [...state.refetch, chatId] }
}

/** Chat type flag of a private chat (spec: "Chat type flags"). */
const PRIVATE_CHAT = 1

/** A chat event's effect on the list (docs/chat-api.md, "Event types"). */
function applyEvent(state: ChatListState, event: BroadcastEvent, me: string, openChatId: string | undefined) {
  if (event.module !== 'chat') return state
  const chatId = String(event.data.chat_id ?? '')
  const chat = state.chats.find((known) => known.id === chatId)
  switch (event.type) {
    case 'NewChatMessage': {
      if (!chat) return { ...state, reload: true }
      const messageId = String(event.data.message_id)
      const fromOther = String(event.data.sender) !== me
      // A view fetched after the message was posted (its last_message is this one or newer)
      // already counts it: the event may arrive after that answer.
      const counted = compareIds(messageId, chat.last_message) <= 0
      const unread = chat.unread + (fromOther && !counted && chatId !== openChatId ? 1 : 0)
      if (compareIds(messageId, chat.last_message) <= 0) return withChat(state, { ...chat, unread })
      const last_message_preview = previewOfEvent(event, state.chats)
      return withChat(state, { ...chat, unread, last_message: messageId, last_message_preview })
    }
    case 'MessageEdited': {
      const preview = chat?.last_message_preview
      if (!chat || preview?.id !== String(event.data.message_id)) return state
      const content = String(event.data.content ?? '').slice(0, PREVIEW_LENGTH)
      return withChat(state, { ...chat, last_message_preview: { ...preview, content, edited: true } })
    }
    case 'CallUpdated': {
      // A call row's record changes as the call goes on: the preview follows (docs/calls.md).
      const preview = chat?.last_message_preview
      if (!chat || preview?.id !== String(event.data.call_id)) return state
      const { media, state: callState, caller, callee, answered_at, ended_at, duration, end_reason } = event.data
      const record = { media, state: callState, caller, callee, answered_at, ended_at, duration, end_reason }
      return withChat(state, { ...chat, last_message_preview: { ...preview, content: JSON.stringify(record) } })
    }
    case 'MessageRead':
      // Our own read (here or in another tab) changes our count; only the server knows what is left.
      return chat && String(event.data.reader) === me ? refetching(state, chatId) : state
    case 'MessageDeleted': {
      // The list shows the newest visible message: when that one goes, only the server knows the
      // one before it (and what is left unread), so this one chat is asked for again.
      const wasPreview = chat?.last_message_preview?.id === String(event.data.message_id)
      return chat && (chat.unread > 0 || wasPreview) ? refetching(state, chatId) : state
    }
    case 'ChatCreated':
    case 'ChatUpdated':
    case 'ChatArchived':
      return refetching(state, chatId)
    case 'MemberAdded':
    case 'MemberUpdated':
      return chat || String(event.data.member) === me ? refetching(state, chatId) : state
    case 'MemberRemoved':
      if (String(event.data.member) === me)
        return { ...state, chats: state.chats.filter((known) => known.id !== chatId) }
      return chat ? refetching(state, chatId) : state
    case 'ChatDeleted':
      return { ...state, chats: state.chats.filter((known) => known.id !== chatId) }
    case 'ProfileChanged': {
      // A private chat is named after its peer (docs/people.md): a rename renames the chat.
      const member = String(event.data.member)
      const name = String(event.data.name)
      const renamed = state.chats.map((known) =>
        known.type === PRIVATE_CHAT && known.peer === member && known.name !== name ? { ...known, name } : known,
      )
      return renamed.some((known, index) => known !== state.chats[index]) ? { ...state, chats: renamed } : state
    }
    default:
      return state
  }
}

/**
 * A state built from a server answer, with the chat events (of `chatId` only, when given) applied
 * after the answer was asked for (`since`) applied again on it: the answer may have been read
 * before those events' changes, and the events do not come again. When the log no longer reaches
 * back that far, the chat (or the whole list) is fetched again instead.
 */
function upToDate(answered: ChatListState, since: number | undefined, chatId?: string): ChatListState {
  if (since === undefined || since >= answered.seq) return answered
  if ((answered.log[0]?.seq ?? Number.POSITIVE_INFINITY) > since + 1) {
    return chatId === undefined ? { ...answered, reload: true } : refetching(answered, chatId)
  }
  let state = answered
  for (const logged of answered.log) {
    if (logged.seq <= since || (chatId !== undefined && String(logged.event.data.chat_id ?? '') !== chatId)) continue
    state = applyEvent(state, logged.event, logged.me, logged.openChatId)
  }
  return state
}

/** The chat list's reducer: server answers replace what they cover, live events adjust the rest. */
export function chatListReducer(state: ChatListState, action: ChatListAction): ChatListState {
  switch (action.type) {
    case 'loaded': {
      const answered = { ...state, chats: orderChats(action.chats), loaded: true, refetch: [], reload: false }
      return upToDate(answered, action.since)
    }
    case 'upsert':
      return upToDate(withChat(state, action.chat), action.since, action.chat.id)
    case 'remove':
      return { ...state, chats: state.chats.filter((chat) => chat.id !== action.chatId) }
    case 'read': {
      const chat = state.chats.find((known) => known.id === action.chatId)
      return chat ? withChat(state, { ...chat, unread: action.unread }) : state
    }
    case 'refetched':
      return { ...state, refetch: state.refetch.filter((chatId) => !action.chatIds.includes(chatId)) }
    case 'resync':
      return { ...state, reload: true }
    case 'event': {
      if (action.event.module !== 'chat') return state
      const seq = state.seq + 1
      const log = [...state.log.slice(1 - LOG_MAX), { ...action, seq }]
      return { ...applyEvent(state, action.event, action.me, action.openChatId), seq, log }
    }
  }
}
