import { useEffect, useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'

/** How often an open chat asks which members are connected. */
const PRESENCE_POLL_MS = 10_000

/** The gateway tells presence for chats of at most this many members (docs/events.md). */
export const PRESENCE_MAX_MEMBERS = 500

/**
 * Which members of a chat have a live connection (GET /auth/v1/presence), asked while `active`:
 * at once and every 10 s. Undefined until the first answer and after a failed one: unknown
 * presence shows nothing rather than a wrong "offline".
 */
export function useMembersPresence(
  api: ChatApi,
  chatId: string,
  active: boolean,
): ReadonlyMap<string, boolean> | undefined {
  const [online, setOnline] = useState<ReadonlyMap<string, boolean> | undefined>(undefined)
  useEffect(() => {
    setOnline(undefined)
    if (!active) return
    let current = true
    const ask = () =>
      api
        .getPresence(chatId)
        .then(({ members }) => {
          if (current) setOnline(new Map(members.map(({ member, online }) => [member, online])))
        })
        .catch(() => {
          if (current) setOnline(undefined)
        })
    ask()
    const timer = setInterval(ask, PRESENCE_POLL_MS)
    return () => {
      current = false
      clearInterval(timer)
    }
  }, [api, chatId, active])
  return online
}
