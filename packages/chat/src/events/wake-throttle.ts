/**
 * Calls `wake` at most once per window for a stream of commits (issue 5: each wake costs the
 * module a check of the new events). The first commit after a quiet window wakes at once, so a
 * lone commit is delivered without added latency; further commits within the window are coalesced
 * into one wake at its end (leading and trailing edge). A wake is only ever delayed, never dropped:
 * a commit that arrives during a window always gets a trailing wake.
 */
export interface WakeThrottle {
  /** Committed events became readable. */
  notify(): void
  /** Cancels a pending trailing wake. */
  close(): void
}

/** `windowMs` 0 wakes at every notify. */
export function createWakeThrottle(windowMs: number, wake: () => void): WakeThrottle {
  let window: ReturnType<typeof setTimeout> | undefined
  let pending = false

  function windowEnded(): void {
    window = undefined
    if (!pending) return
    pending = false
    wake()
    // The trailing wake opens the next window, so a steady stream wakes once per window.
    startWindow()
  }

  function startWindow(): void {
    window = setTimeout(windowEnded, windowMs)
    window.unref?.()
  }

  return {
    notify() {
      if (window) {
        pending = true
        return
      }
      wake()
      if (windowMs > 0) startWindow()
    },
    close() {
      if (window) clearTimeout(window)
      window = undefined
      pending = false
    },
  }
}
