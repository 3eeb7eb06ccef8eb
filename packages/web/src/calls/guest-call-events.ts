import { useEffect } from 'preact/hooks'
import type { EventBus } from '../chat/live/event-bus.ts'
import type { CallApi } from './call-api.ts'

/** How long one request waits for a call event (the chat module's call/events allows 10 s). */
const WAIT_MS = 8000
/** Pause after a failed request before the next. */
const RETRY_MS = 2000

/**
 * Feeds a guest's call events into `bus` while `enabled` (the guest's SSE stream is down):
 * call/events long-polled from the moment it was enabled, in order, each once.
 */
export function useGuestCallEvents(api: CallApi, bus: EventBus, enabled: boolean): void {
  useEffect(() => {
    if (!enabled) return
    let stopped = false
    async function follow() {
      let since: string | undefined
      while (!stopped) {
        try {
          const answer = await api.events(since, since === undefined ? 0 : WAIT_MS)
          if (stopped) return
          for (const event of answer.events) {
            bus.publish({ module: 'chat', tick: Number(event.tick), type: event.type, data: event.data })
          }
          since = answer.last_tick
        } catch {
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
        }
      }
    }
    follow()
    return () => {
      stopped = true
    }
  }, [api, bus, enabled])
}
