/** What the heartbeat wheel asks of a stream once per half heartbeat period. */
export interface Beating {
  beat(): void
}

/** Slots of the wheel: each turn visits every stream once, a slot at a time. */
const SLOTS = 10

/**
 * One timer for the heartbeats of every SSE stream (issue 5) instead of an interval per stream.
 * Streams are spread over the slots of a wheel that turns once per half period, one slot per
 * tick, so the heartbeats of streams that opened together still go out spread over the turn
 * rather than in one burst. The timer runs only while some stream is registered.
 */
export function createHeartbeats(heartbeatMs: number) {
  const slots = Array.from({ length: SLOTS }, () => new Set<Beating>())
  let next = 0
  let tick = 0
  let timer: NodeJS.Timeout | undefined

  function turn() {
    for (const stream of slots[tick]!) stream.beat()
    tick = (tick + 1) % SLOTS
  }

  return {
    add(stream: Beating) {
      const slot = slots[next]!
      next = (next + 1) % SLOTS
      slot.add(stream)
      if (timer) return
      timer = setInterval(turn, Math.max(1, Math.floor(heartbeatMs / 2 / SLOTS)))
      timer.unref()
    },

    delete(stream: Beating) {
      // Looked up in every slot rather than remembered per stream: a close is rare, a stream is many.
      for (const slot of slots) slot.delete(stream)
      if (!timer || slots.some((slot) => slot.size > 0)) return
      clearInterval(timer)
      timer = undefined
    },
  }
}

export type Heartbeats = ReturnType<typeof createHeartbeats>
