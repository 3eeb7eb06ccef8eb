import { useRef, useState } from 'preact/hooks'
import type { MessageView } from '../../api/chat-types.ts'

/**
 * The first of the `unread` newest messages by others (as the chat module counts them: visible
 * messages of other people), which the "New messages" line goes before. When the loaded page
 * holds fewer, the oldest of those it holds; undefined when nothing is unread.
 */
export function firstUnreadId(messages: readonly MessageView[], unread: number, me: string): string | undefined {
  if (unread <= 0) return undefined
  let found: string | undefined
  let counted = 0
  for (let index = messages.length - 1; index >= 0 && counted < unread; index--) {
    const message = messages[index]!
    if (message.owner === me || message.deleted) continue
    found = message.id
    counted++
  }
  return found
}

/**
 * Where the "New messages" line of an open chat goes: decided from the unread count the chat had
 * when it was opened and its first page, then kept while the chat stays open (reading, replying
 * and new arrivals do not move it), as Slack's and Element's markers stay.
 */
export function useUnreadMarker(unreadAtOpen: number, messages: readonly MessageView[], me: string) {
  const [unread] = useState(unreadAtOpen)
  const decided = useRef<{ id: string | undefined } | undefined>(undefined)
  if (!decided.current && messages.length > 0) decided.current = { id: firstUnreadId(messages, unread, me) }
  return decided.current?.id
}
