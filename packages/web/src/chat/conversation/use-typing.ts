import { useEffect, useMemo, useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { createTypingSender, type TypingBoard } from '../live/typing-board.ts'
import { useMembersPresence } from '../live/use-presence.ts'
import { ChatType } from '../message/names.ts'

/** Who is typing in the chat, kept current by the board and re-read when the first entry expires. */
export function useTyping(board: TypingBoard, chatId: string): string[] {
  const [typers, setTypers] = useState(() => board.typingIn(chatId))
  const [tick, setTick] = useState(0)
  useEffect(() => board.subscribe(() => setTick((n) => n + 1)), [board])
  useEffect(() => {
    setTypers(board.typingIn(chatId))
    const next = board.nextExpiry(chatId)
    if (next === undefined) return
    const timer = setTimeout(() => setTick((n) => n + 1), Math.max(0, next - Date.now()) + 50)
    return () => clearTimeout(timer)
  }, [board, chatId, tick])
  return typers
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
