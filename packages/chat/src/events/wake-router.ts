import type { Subjects, Touched } from './event-feed.ts'

/** A waiting long-poll as the router sees it. */
export interface Waiter {
  /** How many times this waiter was woken; read it before each read of the feed. */
  readonly wakes: number
  /**
   * Resolves at the first wake after `seen` wakes (at once when one already happened, so a wake
   * during the caller's read is not missed), after `ms`, or when `signal` aborts.
   */
  wait(seen: number, ms: number, signal?: AbortSignal): Promise<void>
  /** The long-poll is answered: it is no longer woken. */
  leave(): void
}

export interface WakeRouter {
  /** Registers a long-poll for these subjects (undefined: every addressee); call before its first read. */
  join(subjects: Subjects | undefined): Waiter
  /** Events became readable: look at them once and wake the waiters they concern. */
  check(): void
  /** Answers every waiter and stops looking. */
  close(): void
}

interface WaiterState {
  members: Set<number> | undefined
  apps: Set<number>
  wakes: number
  done: (() => void) | undefined
}

/**
 * Wakes each waiting long-poll of /private/v1/events only when newly readable events concern its
 * subjects (issue 5: with every waiting long-poll re-reading at every wake, the module's cost per
 * event grew with the number of subscribers a gateway polls for). A check reads who the events
 * after the last checked head concern, once for every waiter, and wakes those whose subjects
 * they name; the others keep waiting without a query.
 *
 * No event is missed: the feed makes events readable in cursor order, so an event a waiter's own
 * read did not see becomes readable after that read began, hence after the waiter joined, and the
 * check that covers it runs after it became readable and so sees the waiter. Events committed by
 * other instances of the module wake nobody here; a check every `recheckMs` while anyone waits
 * covers them. A failed check wakes every waiter, whose own reads then run as before.
 */
export function createWakeRouter(touched: (after: number) => Promise<Touched>, recheckMs: number): WakeRouter {
  const waiters = new Set<WaiterState>()
  // Every event up to this tick was checked against the waiters registered when it was.
  let checkedHead = 0
  let running = false
  let again = false
  let closed = false
  let recheck: ReturnType<typeof setTimeout> | undefined

  function wake(waiter: WaiterState): void {
    waiter.wakes += 1
    waiter.done?.()
  }

  function concerns(waiter: WaiterState, news: Touched): boolean {
    if (news.everyone || waiter.members === undefined) return true
    for (const app of waiter.apps) if (news.apps.has(app)) return true
    const [small, large] =
      waiter.members.size < news.members.size ? [waiter.members, news.members] : [news.members, waiter.members]
    for (const member of small) if (large.has(member)) return true
    return false
  }

  async function checkOnce(): Promise<void> {
    let news: Touched
    try {
      news = await touched(checkedHead)
    } catch {
      for (const waiter of waiters) wake(waiter)
      return
    }
    if (news.head <= checkedHead) return
    checkedHead = news.head
    for (const waiter of waiters) if (concerns(waiter, news)) wake(waiter)
  }

  async function check(): Promise<void> {
    if (closed) return
    if (running) {
      again = true
      return
    }
    running = true
    try {
      do {
        again = false
        if (waiters.size > 0) await checkOnce()
      } while (again && !closed)
    } finally {
      running = false
      armRecheck()
    }
  }

  function armRecheck(): void {
    if (recheck) clearTimeout(recheck)
    recheck = undefined
    if (closed || waiters.size === 0) return
    recheck = setTimeout(() => void check(), recheckMs)
    recheck.unref?.()
  }

  return {
    join(subjects) {
      const state: WaiterState = {
        members: subjects && new Set(subjects.members),
        apps: new Set(subjects?.apps),
        wakes: 0,
        done: undefined,
      }
      waiters.add(state)
      if (!recheck && !running) armRecheck()
      return {
        get wakes() {
          return state.wakes
        },
        wait(seen, ms, signal) {
          if (state.wakes > seen || closed || signal?.aborted) return Promise.resolve()
          return new Promise<void>((resolve) => {
            const done = () => {
              clearTimeout(timer)
              signal?.removeEventListener('abort', done)
              state.done = undefined
              resolve()
            }
            const timer = setTimeout(done, ms)
            signal?.addEventListener('abort', done, { once: true })
            state.done = done
          })
        },
        leave() {
          waiters.delete(state)
          state.done?.()
          if (waiters.size === 0) armRecheck()
        },
      }
    },
    check() {
      void check()
    },
    close() {
      closed = true
      if (recheck) clearTimeout(recheck)
      recheck = undefined
      for (const waiter of waiters) waiter.done?.()
    },
  }
}
