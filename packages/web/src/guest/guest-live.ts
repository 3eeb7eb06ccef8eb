import { useEffect, useRef, useState } from 'preact/hooks'
import type { EventBus } from '../chat/live/event-bus.ts'
import { type LiveStatus, openLiveEvents } from '../live-events.ts'

/** First pause of the fallback polling while a guest's stream is down; it doubles after each poll. */
export const GUEST_POLL_MS = 4000
/** Longest pause between two fallback polls. */
export const GUEST_POLL_MAX_MS = 60_000

/**
 * The address of a guest's event stream: the invite code and the device that joined it, in the
 * query because an EventSource sends no headers. The gateway derives the guest's `code:` subject
 * from them (docs/events.md, "Guests").
 */
export function guestSubscribeUrl(subscribeUrl: string, code: string, deviceGuid: string): string {
  return `${subscribeUrl}?${new URLSearchParams({ code, device_guid: deviceGuid })}`
}

/**
 * Opens a guest's SSE stream once `enabled` (after the guest joined) with the client members use
 * (`openLiveEvents`: replay with `since` after a break, back-off between reconnects) and hands its
 * events to `bus`; a resync becomes `'resync'`. Returns the stream's status.
 */
export function useGuestLiveEvents(url: string, bus: EventBus, enabled: boolean): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>('connecting')
  useEffect(() => {
    if (!enabled) return
    const live = openLiveEvents({
      url,
      onEvent: (event) => bus.publish(event),
      onResync: () => bus.publish('resync'),
      onStatus: setStatus,
    })
    return () => live.close()
  }, [url, bus, enabled])
  return status
}

/**
 * While `active` (the stream is down), calls `poll` after GUEST_POLL_MS, then after twice as long
 * each time up to GUEST_POLL_MAX_MS, and when the page becomes visible again; a hidden page is not
 * polled. Stops as soon as `active` is false, so a live page makes no polling requests.
 */
export function useFallbackPolling(poll: () => Promise<void>, active: boolean): void {
  const latest = useRef(poll)
  latest.current = poll
  useEffect(() => {
    if (!active) return
    let delay = GUEST_POLL_MS
    let timer: ReturnType<typeof setTimeout> | undefined
    let stopped = false
    async function tick() {
      if (document.visibilityState === 'visible') await latest.current()
      if (stopped) return
      delay = Math.min(delay * 2, GUEST_POLL_MAX_MS)
      timer = setTimeout(tick, delay)
    }
    const visible = () => {
      if (document.visibilityState === 'visible') void latest.current()
    }
    timer = setTimeout(tick, delay)
    document.addEventListener('visibilitychange', visible)
    return () => {
      stopped = true
      clearTimeout(timer)
      document.removeEventListener('visibilitychange', visible)
    }
  }, [active])
}
