import { setTimeout as sleep } from 'node:timers/promises'
import type { BroadcastEvent, EventBatch } from '@atrium/platform'
import { EventsCallError, type FetchEvents } from './module-events.ts'
import { normalizeBatch } from './module-poller.ts'

/** One module to replay: everything after `since` up to at least `until`, where live delivery took over. */
export interface ReplaySource {
  module: string
  fetchEvents: FetchEvents
  since: number
  until: number
}

export interface ReplayOptions {
  sources: readonly ReplaySource[]
  subjects: readonly string[]
  limit: number
  /** Pause before the second and third try of a failed page. */
  retryMs: number
  signal: AbortSignal
  /** Receives the replayed events, in tick order across modules. */
  emit: (module: string, event: BroadcastEvent) => void
  /** Resolves when the client has read what was emitted, so a long replay never piles up in memory. */
  drained: () => Promise<void>
}

export interface ReplayResult {
  /** Per module, the cursor the replay reached: live events up to it were replayed already. */
  floors: Map<string, number>
  /** Modules that could not be replayed (down after three tries). */
  failed: string[]
}

interface SourceState extends ReplaySource {
  position: number
  buffer: BroadcastEvent[]
  /** No further page is needed (caught up, failed, or no events endpoint). */
  done: boolean
  failed: boolean
}

const TRIES = 3

/**
 * Replays a reconnecting subscriber's missed events by calling each module's events endpoint
 * directly, page by page, with the subscriber's subjects. Pages of all modules are merged so the
 * events leave in global tick order (ticks are timeticks, comparable across modules): an event is
 * emitted only once every module still being read has passed its tick.
 */
export async function replay(options: ReplayOptions): Promise<ReplayResult> {
  const { subjects, limit, signal, emit, drained } = options
  const states: SourceState[] = options.sources.map((source) => ({
    ...source,
    position: source.since,
    buffer: [],
    done: source.since >= source.until,
    failed: false,
  }))

  async function fill(state: SourceState) {
    let batch: EventBatch | undefined
    for (let attempt = 1; batch === undefined; attempt++) {
      try {
        batch = await state.fetchEvents({ since: state.position, subjects, limit, wait: 0 }, signal)
      } catch (error) {
        signal.throwIfAborted()
        const missing = error instanceof EventsCallError && error.failure === 'missing'
        if (missing || attempt === TRIES) {
          state.done = true
          state.failed = !missing
          return
        }
        await sleep(options.retryMs * attempt, undefined, { signal })
      }
    }
    const events: BroadcastEvent[] = []
    for (const { event } of normalizeBatch(state.module, batch)) {
      if (event.tick > state.position && event !== events.at(-1)) events.push(event)
    }
    if (events.length === 0 && batch.LastTick <= state.position) {
      state.done = true
      return
    }
    state.buffer = events
    state.position = Math.max(state.position, batch.LastTick)
    if (state.position >= state.until) state.done = true
  }

  for (;;) {
    await Promise.all(states.filter((state) => !state.done && state.buffer.length === 0).map(fill))
    signal.throwIfAborted()
    const reading = states.filter((state) => !state.done || state.buffer.length > 0)
    if (reading.length === 0) break
    const bound = Math.min(...reading.map((state) => state.position))
    const ready: { module: string; event: BroadcastEvent }[] = []
    for (const state of reading) {
      const count = state.buffer.findIndex((event) => event.tick > bound)
      const taken = state.buffer.splice(0, count === -1 ? state.buffer.length : count)
      for (const event of taken) ready.push({ module: state.module, event })
    }
    ready.sort((a, b) => a.event.tick - b.event.tick)
    for (const { module, event } of ready) emit(module, event)
    await drained()
  }
  return {
    floors: new Map(states.map((state) => [state.module, state.position])),
    failed: states.filter((state) => state.failed).map((state) => state.module),
  }
}
