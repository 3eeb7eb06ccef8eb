import { useEffect, useState } from 'preact/hooks'
import type { ChatView } from '../api/chat-types.ts'
import { nextMuteEnd } from './mute.ts'

/** Browsers run a timeout longer than this (a signed 32-bit delay) at once. */
const LONGEST_TIMEOUT_MS = 2 ** 31 - 1

/**
 * Renders the caller again when the first timed mute of `chats` ends, so that what shows the mute
 * (the list's 🔕, Chat info's "Muted until") goes by itself. A timer that fires early, or a mute
 * beyond the longest timeout, is simply set again from the render it caused.
 */
export function useMuteEnds(chats: readonly Pick<ChatView, 'muted' | 'muted_until'>[]): void {
  const [checkedAt, setCheckedAt] = useState(0)
  const end = nextMuteEnd(chats)
  useEffect(() => {
    if (end === undefined) return
    const timer = setTimeout(() => setCheckedAt(Date.now()), Math.min(end - Date.now() + 1, LONGEST_TIMEOUT_MS))
    return () => clearTimeout(timer)
  }, [end, checkedAt])
}
