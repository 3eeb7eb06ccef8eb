import type { TypingSignal } from '../../live-events.ts'

/**
 * Who is typing where, from the gateway's typing frames: each entry expires by itself after the
 * signal's `expires_ms`, and a message from that person in that chat ends it at once.
 */
export function createTypingBoard(now: () => number = Date.now) {
  const byChat = new Map<string, Map<string, number>>()
  const listeners = new Set<() => void>()
  const changed = () => {
    for (const listener of listeners) listener()
  }

  /** Who is typing in the chat now, in the order they started. */
  function typingIn(chatId: string): string[] {
    const typers = byChat.get(chatId)
    if (!typers) return []
    const at = now()
    for (const [user, until] of typers) if (until <= at) typers.delete(user)
    return [...typers.keys()]
  }

  return {
    add(signal: TypingSignal): void {
      let typers = byChat.get(signal.chat_id)
      if (!typers) {
        typers = new Map()
        byChat.set(signal.chat_id, typers)
      }
      typers.set(signal.user, now() + signal.expires_ms)
      changed()
    },

    /** The person sent a message (or left): they are no longer typing there. */
    stopped(chatId: string, user: string): void {
      if (byChat.get(chatId)?.delete(user)) changed()
    },

    typingIn,

    /** Who is typing now in each chat where someone is (for the chat list's rows). */
    typingByChat(): Map<string, string[]> {
      const found = new Map<string, string[]>()
      for (const chatId of [...byChat.keys()]) {
        const typers = typingIn(chatId)
        if (typers.length > 0) found.set(chatId, typers)
        else byChat.delete(chatId)
      }
      return found
    },

    /** When the chat's first typing entry ends (any chat's, without one), or undefined when nobody types there. */
    nextExpiry(chatId?: string): number | undefined {
      const chats = chatId === undefined ? [...byChat.values()] : [byChat.get(chatId)]
      const ends = chats.flatMap((typers) => [...(typers?.values() ?? [])])
      return ends.length > 0 ? Math.min(...ends) : undefined
    },

    subscribe(listener: () => void): () => void {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}

export type TypingBoard = ReturnType<typeof createTypingBoard>

/** Sends typing at most once every `intervalMs` while the person types, whatever the keystrokes. */
export function createTypingSender(send: () => Promise<unknown>, intervalMs = 3_000, now: () => number = Date.now) {
  let last = Number.NEGATIVE_INFINITY
  return function typed(): void {
    if (now() - last < intervalMs) return
    last = now()
    // A lost or refused signal only means no indicator on the other side: nothing to tell the person.
    send().catch(() => {})
  }
}

/** The indicator's words: "Alice is typing…", "Alice and Bob are typing…", "3 people are typing…". */
export function typingText(names: string[]): string {
  if (names.length === 0) return ''
  if (names.length === 1) return `${names[0]} is typing…`
  if (names.length === 2) return `${names[0]} and ${names[1]} are typing…`
  return `${names.length} people are typing…`
}
