import { useMemo } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { createTypingSender, type TypingBoard } from '../live/typing-board.ts'
import { useMembersPresence } from '../live/use-presence.ts'
import { useTypingReading } from '../live/use-typing-board.ts'
import { ChatType } from '../message/names.ts'

/** Who is typing in the chat, kept current by the board and re-read when the first entry expires. */
export function useTyping(board: TypingBoard, chatId: string): string[] {
  return useTypingReading(board, () => board.typingIn(chatId), chatId)
}

/** A function the composer calls on every keystroke; it tells the gateway at most once every 3 s. */
export function useTypingSender(api: ChatApi, chatId: string): () => void {
  return useMemo(() => createTypingSender(() => api.sendTyping(chatId)), [api, chatId])
}

/**
 * Whether the peer of an open private chat has a live connection; undefined for other chats and
 * until the first answer. A peer who is typing is online whatever the last answer said.
 */
export function usePeerPresence(api: ChatApi, chat: ChatView, typers: string[]): boolean | undefined {
  const isPrivate = chat.type === ChatType.Private
  const online = useMembersPresence(api, chat.id, isPrivate)
  if (!isPrivate) return undefined
  return typers.includes(chat.peer) ? true : online?.get(chat.peer)
}
