/** Keys one window may hold; past it new keys pass uncounted rather than memory growing without end. */
export const MAX_KEYS_PER_WINDOW = 500_000

/** When the clock-aligned window holding `at` ends: windows are multiples of their length on the clock. */
export function windowEndAfter(at: number, windowMs: number): number {
  return (Math.floor(at / windowMs) + 1) * windowMs
}

/**
 * A fixed-window counter: windows are aligned to multiples of their length on the clock, so every
 * key's window ends at the same moment and the whole map is dropped then. Memory is bounded by
 * the keys seen in one window (and MAX_KEYS_PER_WINDOW).
 */
export function createFixedWindow<K>(
  limit: number,
  windowSeconds: number,
  now: () => number,
  /** Told of every use counted here (not of `addFrom`), for sharing with other processes. */
  counted?: (key: K, amount: number) => void,
) {
  const windowMs = windowSeconds * 1000
  let windowEnd = 0
  let used = new Map<K, number>()

  function roll(at: number) {
    if (at < windowEnd) return
    windowEnd = windowEndAfter(at, windowMs)
    used = new Map()
  }

  function count(key: K, amount: number) {
    const total = used.get(key)
    if (total !== undefined || used.size < MAX_KEYS_PER_WINDOW) used.set(key, (total ?? 0) + amount)
  }

  return {
    /**
     * Admits one use of the key while its window total is below the limit and adds `amount`;
     * returns 0 when admitted, else the whole seconds until the window ends (at least 1).
     */
    take(key: K, amount = 1): number {
      const at = now()
      roll(at)
      const total = used.get(key)
      if (total !== undefined && total >= limit) return Math.ceil((windowEnd - at) / 1000)
      count(key, amount)
      counted?.(key, amount)
      return 0
    },

    /** Adds to the key's total without a check (bytes that flowed after the request was admitted). */
    add(key: K, amount: number): void {
      roll(now())
      count(key, amount)
      counted?.(key, amount)
    },

    /**
     * Adds uses another process counted in the window ending at `end`; ignored once that window
     * is over here (their window and ours are the same clock-aligned one).
     */
    addFrom(end: number, key: K, amount: number): void {
      roll(now())
      if (end === windowEnd) count(key, amount)
    },

    /** When the current window ends (epoch ms): the window's name across processes. */
    windowEnd(): number {
      roll(now())
      return windowEnd
    },

    /** Keys counted in the current window. */
    get size(): number {
      return used.size
    },
  }
}

export type FixedWindow<K> = ReturnType<typeof createFixedWindow<K>>

/**
 * The same counter for connections: the count lives in a WeakMap entry of the socket or HTTP/2
 * session, so it goes when the connection is collected and nothing needs pruning.
 */
export function createConnectionWindow(limit: number, windowSeconds: number, now: () => number) {
  const windowMs = windowSeconds * 1000
  const counts = new WeakMap<object, { windowEnd: number; used: number }>()

  return function takeForConnection(connection: object): number {
    const at = now()
    let entry = counts.get(connection)
    if (!entry || at >= entry.windowEnd) {
      entry = { windowEnd: windowEndAfter(at, windowMs), used: 0 }
      counts.set(connection, entry)
    }
    if (entry.used >= limit) return Math.ceil((entry.windowEnd - at) / 1000)
    entry.used += 1
    return 0
  }
}
