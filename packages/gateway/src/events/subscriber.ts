import { once } from 'node:events'
import type { Writable } from 'node:stream'
import type { BroadcastEvent } from '@atrium/platform'
import { addresseeKeyOf } from './module-poller.ts'

/** Why a stream tells its client to resync: its `since` is too old, it was too slow, or a module could not replay. */
export type ResyncReason = 'too-old' | 'slow-consumer' | 'replay-failed'

export interface SubscriberOptions {
  /** The SSE response body. */
  stream: Writable
  /** `user:`, `app:` and `code:` subjects of the caller. */
  subjects: readonly string[]
  /** SSE frame of an event, made once per event and shared by every subscriber. */
  frameOf: (event: BroadcastEvent) => string
  maxQueued: number
  heartbeatMs: number
  /** Called once when the stream ends, whoever ended it. */
  onClose: () => void
}

/** How long an ended stream may take to reach its client before it is cut. */
const CLOSE_GRACE_MS = 5000

interface ModuleState {
  chunk: number
  /** The highest tick of this module already sent or covered by the replay: anything up to it is dropped. */
  last: number
}

/**
 * One SSE stream. Live events wait while the replay runs and are then sent after it with the
 * replay's end as the floor, so the seam has neither gap nor duplicate. Events of a module are
 * accepted only from the chunk polling this subscriber's subjects, in that chunk's cursor order.
 * A stream whose client does not read more than `maxQueued` events gets a resync and is closed.
 */
export function createSubscriber({ stream, subjects, frameOf, maxQueued, heartbeatMs, onClose }: SubscriberOptions) {
  const modules = new Map<string, ModuleState>()
  let pending: { module: string; event: BroadcastEvent }[] = []
  let replaying = true
  let queued = 0
  let highest = 0
  let closed = false

  stream.on('drain', () => {
    queued = 0
  })
  stream.on('close', () => close())
  // Only a stream that was silent for a whole heartbeat period gets one (docs/events.md: "while idle"):
  // checked every half period, so the silence never exceeds heartbeatMs. A busy stream needs none;
  // 10,000 streams wrote 667 a second whatever else they carried (bench/sse.ts, issue 5).
  let silentChecks = 0
  const heartbeat = setInterval(
    () => {
      if (++silentChecks >= 2 && queued === 0) write(': heartbeat\n\n')
    },
    Math.max(1, Math.floor(heartbeatMs / 2)),
  )
  heartbeat.unref()

  function write(text: string) {
    if (closed) return
    silentChecks = 0
    if (!stream.write(text)) queued++
  }

  function send(module: string, event: BroadcastEvent) {
    const state = modules.get(module)
    if (!state || event.tick <= state.last) return
    state.last = event.tick
    highest = Math.max(highest, event.tick)
    write(frameOf(event))
    if (queued > maxQueued) overflow()
  }

  function overflow() {
    resync('slow-consumer', highest)
    close()
  }

  function resync(reason: ResyncReason, tick: number, module?: string) {
    const data = module === undefined ? { reason, tick } : { reason, tick, module }
    write(`id: ${tick}\nevent: resync\ndata: ${JSON.stringify(data)}\n\n`)
  }

  function close() {
    if (closed) return
    closed = true
    clearInterval(heartbeat)
    pending = []
    if (!stream.writableEnded) stream.end()
    // A client that stopped reading would hold the ended stream (and its buffer) open forever.
    if (!stream.writableFinished) setTimeout(() => stream.destroy(), CLOSE_GRACE_MS).unref()
    onClose()
  }

  return {
    subjects,
    /** Addressee keys this subscriber receives items for (`m:<id>`, `a:<id>`). */
    keys: new Set(subjects.map(addresseeKeyOf)),
    get closed() {
      return closed
    },

    /** Starts accepting events of a module from one chunk; events up to `last` are dropped. */
    attach(module: string, chunk: number, last: number) {
      modules.set(module, { chunk, last })
    },

    /** A live event from a module's poller: held while replaying, sent otherwise. */
    offer(module: string, chunk: number, event: BroadcastEvent) {
      if (closed || modules.get(module)?.chunk !== chunk) return
      if (!replaying) return send(module, event)
      pending.push({ module, event })
      if (pending.length > maxQueued) overflow()
    },

    /** An event of the replay, in tick order. */
    replayed(module: string, event: BroadcastEvent) {
      send(module, event)
    },

    /** Ends the replay: the held live events above each module's floor follow, in tick order. */
    goLive(floors: ReadonlyMap<string, number>) {
      if (closed) return
      for (const [module, floor] of floors) {
        const state = modules.get(module)
        if (state) state.last = Math.max(state.last, floor)
      }
      const held = pending
      pending = []
      replaying = false
      held.sort((a, b) => a.event.tick - b.event.tick)
      for (const { module, event } of held) send(module, event)
    },

    resync,

    /** Writes a comment line, which also makes the response headers go out. */
    comment(text: string) {
      write(`: ${text}\n\n`)
    },

    /** Resolves when the client has read what was written (or the stream ended). */
    async drained(): Promise<void> {
      if (closed || !stream.writableNeedDrain) return
      const settled = new AbortController()
      await Promise.race([
        once(stream, 'drain', { signal: settled.signal }),
        once(stream, 'close', { signal: settled.signal }),
      ]).finally(() => settled.abort())
    },

    close,
  }
}

export type Subscriber = ReturnType<typeof createSubscriber>
