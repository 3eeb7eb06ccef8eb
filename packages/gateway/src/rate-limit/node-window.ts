import type { Awaitable } from '../auth/caller.ts'
import { MAX_KEYS_PER_WINDOW, windowEndAfter } from './fixed-window.ts'
import type { LimitMessage } from './limit-grants.ts'
import type { UsageKey } from './usage-share.ts'

/** How long a worker waits for the primary's grant; the primary answers in microseconds, unless it is gone. */
const ASK_TIMEOUT_MS = 2_000
/** A key the primary refused for the rest of its window. */
const FULL = -1

type Grant = Extract<LimitMessage, { op: 'grant' }>
type Ask = Omit<Extract<LimitMessage, { op: 'ask' }>, 'id'>

/** What a window sends to the primary. */
interface PrimaryLink {
  ask(message: Ask, granted: (grant: Grant) => void): void
  /** Present in worker 0 only: uses other gateway nodes reported, for the primary to count once. */
  foreign?(message: Omit<Extract<LimitMessage, { op: 'foreign' }>, 'op'>): void
}

/**
 * A limit window that counts for the whole node, in one worker (docs/operations.md, "Workers"):
 * the fixed window of fixed-window.ts, whose counts the primary keeps (limit-grants.ts). While the
 * worker holds an allowance for the key it admits and counts at once, as a single process does;
 * otherwise it asks the primary and the request waits for the answer. Bytes past the allowance
 * are counted with the primary before they go on (the returned promise), so the request after
 * them sees them whichever worker takes it. A refusal is kept here until the window ends.
 */
function createNodeWindow<K extends UsageKey>(
  link: PrimaryLink,
  scope: string,
  limit: number,
  windowSeconds: number,
  now: () => number,
  /** Told of every use counted here, for sharing with other gateway nodes. */
  counted?: (key: K, amount: number) => void,
) {
  const windowMs = windowSeconds * 1000
  let windowEnd = 0
  /** What each key may still count without asking, or FULL. */
  let allowances = new Map<K, number>()

  function roll(at: number) {
    if (at < windowEnd) return
    windowEnd = windowEndAfter(at, windowMs)
    allowances = new Map()
  }

  /** Asks the primary to count `amount`; the grant's allowance is kept before the request goes on. */
  function ask(key: K, amount: number, check: boolean): Promise<boolean> {
    const end = windowEnd
    return new Promise((resolve) => {
      link.ask({ op: 'ask', scope, key, end, limit, amount, check }, ({ admitted, allowance }) => {
        const held = allowances.get(key)
        if (end === windowEnd && held !== FULL) allowances.set(key, admitted ? (held ?? 0) + allowance : FULL)
        resolve(admitted)
      })
    })
  }

  const retryAfter = (at: number) => Math.ceil((windowEnd - at) / 1000)

  /** Counts `amount` against what the key holds; past it, with the primary. */
  function spend(key: K, held: number, amount: number): Awaitable<void> {
    counted?.(key, amount)
    const left = held - amount
    if (left >= 0) {
      allowances.set(key, left)
      return
    }
    allowances.set(key, 0)
    return ask(key, -left, false).then(() => {})
  }

  /** Whether the key is counted nowhere: a window holds at most MAX_KEYS_PER_WINDOW, as fixed-window.ts. */
  const uncounted = (held: number | undefined) => held === undefined && allowances.size >= MAX_KEYS_PER_WINDOW

  return {
    /**
     * Admits one use of the key while the node's window total is below the limit and adds
     * `amount`; resolves to 0 when admitted, else the whole seconds until the window ends.
     */
    take(key: K, amount = 1): Awaitable<number> {
      const at = now()
      roll(at)
      const held = allowances.get(key)
      if (held === FULL || uncounted(held)) return held === FULL ? retryAfter(at) : 0
      if (held !== undefined && held > 0) {
        void spend(key, held, amount)
        return 0
      }
      return ask(key, amount, true).then((admitted) => {
        if (!admitted) return retryAfter(now())
        counted?.(key, amount)
        return 0
      })
    },

    /**
     * Adds to the key's total without a check (bytes that flowed after the request was admitted);
     * a promise when they went past the allowance, settled once the primary counted them.
     */
    add(key: K, amount: number): Awaitable<void> {
      roll(now())
      const held = allowances.get(key)
      if (amount === 0) return
      if (held === FULL || uncounted(held)) return counted?.(key, amount)
      return spend(key, held ?? 0, amount)
    },

    /** Gives back what is left of the key's allowance in the window ending at `end` (the primary reclaims it). */
    giveBack(end: number, key: K): number {
      const held = allowances.get(key)
      if (end !== windowEnd || held === undefined || held <= 0) return 0
      allowances.set(key, 0)
      return held
    },

    /** Uses another gateway node counted: worker 0 tells the primary, which counts them for the node. */
    addFrom(end: number, key: K, amount: number): void {
      roll(now())
      if (end === windowEnd) link.foreign?.({ scope, key, end, limit, amount })
    },

    /** When the current window ends (epoch ms): the window's name across processes. */
    windowEnd(): number {
      roll(now())
      return windowEnd
    },
  }
}

export type NodeWindow<K extends UsageKey> = ReturnType<typeof createNodeWindow<K>>

/**
 * A worker's end of the node's limits: `receive` takes the primary's limit messages and `send`
 * goes to it (server/workers.ts). Worker 0 (`forwardsForeign`) tells the primary what other
 * gateway nodes reported, once for the node.
 */
export function createLimitLink(send: (message: LimitMessage) => void, { forwardsForeign = false } = {}) {
  const waiting = new Map<number, (grant: Grant) => void>()
  const windows = new Map<string, NodeWindow<UsageKey>>()
  let nextId = 0

  function answer(grant: Grant) {
    const granted = waiting.get(grant.id)
    waiting.delete(grant.id)
    granted?.(grant)
  }

  const link: PrimaryLink = {
    ask(message, granted) {
      const id = ++nextId
      // Without an answer (the primary gone, the worker stopping) the request is let through uncounted.
      const timer = setTimeout(() => answer({ op: 'grant', id, admitted: true, allowance: 0 }), ASK_TIMEOUT_MS)
      timer.unref()
      waiting.set(id, (grant) => {
        clearTimeout(timer)
        granted(grant)
      })
      send({ ...message, id })
    },
    ...(forwardsForeign && { foreign: (message) => send({ op: 'foreign', ...message }) }),
  }

  return {
    /** A window of `scope` whose counts are the node's. */
    window<K extends UsageKey>(
      scope: string,
      limit: number,
      windowSeconds: number,
      now: () => number,
      counted?: (key: K, amount: number) => void,
    ): NodeWindow<K> {
      const window = createNodeWindow<K>(link, scope, limit, windowSeconds, now, counted)
      windows.set(scope, window as unknown as NodeWindow<UsageKey>)
      return window
    },

    /** Handles a limit message from the primary. */
    receive(message: LimitMessage): void {
      if (message.op === 'grant') answer(message)
      else if (message.op === 'reclaim') {
        const amount = windows.get(message.scope)?.giveBack(message.end, message.key) ?? 0
        send({ op: 'returned', id: message.id, amount })
      }
    },

    /** Lets every waiting request through: the primary is gone and this worker stops. */
    disconnected(): void {
      for (const id of [...waiting.keys()]) answer({ op: 'grant', id, admitted: true, allowance: 0 })
    },
  }
}

export type LimitLink = ReturnType<typeof createLimitLink>
