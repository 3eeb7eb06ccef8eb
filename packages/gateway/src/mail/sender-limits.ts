/**
 * Fixed one-hour windows of messages per sender key (an envelope sender, or a client IP for
 * bounces), kept in memory by each gateway: `take` counts one and says whether it is within
 * `perHour` (0: no limit).
 */
export function createSenderLimits(perHour: number, now: () => number) {
  const HOUR = 3_600_000
  const windows = new Map<string, { start: number; count: number }>()

  function sweep(time: number): void {
    for (const [key, window] of windows) if (time - window.start >= HOUR) windows.delete(key)
  }

  return function take(key: string): boolean {
    if (perHour === 0) return true
    const time = now()
    // Old windows go once the map grows, so many one-off senders cannot hold memory.
    if (windows.size > 10_000) sweep(time)
    const window = windows.get(key)
    if (!window || time - window.start >= HOUR) {
      windows.set(key, { start: time, count: 1 })
      return true
    }
    window.count++
    return window.count <= perHour
  }
}
