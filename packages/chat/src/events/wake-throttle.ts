/**
 * Wakes waiting long-polls of /private/v1/events at most once per window (issue 5: every commit
 * used to wake every waiting long-poll, and each ran its full events query). The first commit after
 * a quiet window wakes at once, so a lone commit is delivered without added latency; further commits
 * within the window are coalesced into one wake at its end (leading and trailing edge). A wake is
 * only ever delayed, never dropped: a commit that arrives during a window always gets a trailing wake.
 */
export interface WakeThrottle {
  /** How many wakes happened so far; a long-poll reads it before it reads the feed. */
  readonly wakes: number
  /** Committed events became readable. */
  notify(): void
  /**
   * Resolves at the first wake after `seen` wakes (at once when one already happened, so a wake
   * during the caller's read is not missed), after `ms`, or when `signal` aborts.
   */
  wait(seen: number, ms: number, signal?: AbortSignal): Promise<void>
  /** Cancels a pending trailing wake and answers every waiter. */
  close(): void
}

/** `windowMs` 0 wakes at every notify. */
export function createWakeThrottle(windowMs: number): WakeThrottle {
  const waiters = new Set<() => void>()
  let wakes = 0
  let window: ReturnType<typeof setTimeout> | undefined
  let pending = false

  function wake(): void {
    wakes += 1
    for (const done of [...waiters]) done()
  }

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
    get wakes() {
      return wakes
    },
    notify() {
      if (window) {
        pending = true
        return
      }
      wake()
      if (windowMs > 0) startWindow()
    },
    wait(seen, ms, signal) {
      if (wakes > seen || signal?.aborted) return Promise.resolve()
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', done)
          waiters.delete(done)
          resolve()
        }
        const timer = setTimeout(done, ms)
        signal?.addEventListener('abort', done, { once: true })
        waiters.add(done)
      })
    },
    close() {
      if (window) clearTimeout(window)
      window = undefined
      pending = false
      for (const done of [...waiters]) done()
    },
  }
}
