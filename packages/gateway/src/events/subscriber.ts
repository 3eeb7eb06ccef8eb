import { type EventEmitter, once } from 'node:events'
import { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { BroadcastEvent } from '@atrium/platform'
import type { Heartbeats } from './heartbeats.ts'
import { addresseeKeyOf } from './module-poller.ts'
import { frameIn, toChunk } from './sse-chunks.ts'

/** Why a stream tells its client to resync: its `since` is too old, it was too slow, or a module could not replay. */
export type ResyncReason = 'too-old' | 'slow-consumer' | 'replay-failed'

/** What a stream writes to: the HTTP/1.1 or HTTP/2 response, whose head the caller writes. */
export interface SseResponse extends EventEmitter {
  readonly writableEnded: boolean
  readonly writableFinished: boolean
  readonly writableNeedDrain: boolean
  write(chunk: string | Uint8Array): boolean
  end(): unknown
  destroy(): unknown
}

export interface SubscriberOptions {
  response: SseResponse
  /** `user:`, `app:` and `code:` subjects of the caller. */
  subjects: readonly string[]
  /** SSE frame of an event as an HTTP/1.1 chunk (sse-chunks.ts), made once per event and shared by every subscriber. */
  frameOf: (event: BroadcastEvent) => Uint8Array
  maxQueued: number
  heartbeats: Heartbeats
  /** Told the size of every write, for the bandwidth limit. */
  countSent: (bytes: number) => void
  /** Called once when the stream ends, whoever ended it. */
  onClose: () => void
  /** Told of every event written to the stream (the delivery metric). */
  onDelivered?: () => void
  /** The heartbeat frame; default the comment `: heartbeat` (`?heartbeat=event` asks for a message). */
  heartbeat?: Uint8Array
}

/** The same bytes for every stream, so a heartbeat is never encoded again. */
const HEARTBEAT = toChunk(': heartbeat\n\n')

/** How long an ended stream may take to reach its client before it is cut. */
const CLOSE_GRACE_MS = 5000

/**
 * The socket an HTTP/1.1 response's chunks can be written to directly, with its head sent: one write
 * per frame instead of Node framing each chunk again (a corked write of three buffers) through the
 * response's stream. None for a response that frames its body otherwise (HTTP/2; HTTP/1.0 without
 * chunks), or that waits behind an unfinished answer on its connection (pipelined: no socket yet).
 */
function directSocketOf(response: SseResponse): Socket | undefined {
  if (!(response instanceof ServerResponse) || !response.chunkedEncoding || !response.socket) return undefined
  response.flushHeaders()
  return response.socket
}

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
export function createSubscriber({
  response,
  subjects,
  frameOf,
  maxQueued,
  heartbeats,
  countSent,
  onClose,
  onDelivered,
  heartbeat = HEARTBEAT,
}: SubscriberOptions) {
  const modules = new Map<string, ModuleState>()
  let pending: { module: string; event: BroadcastEvent }[] = []
  let replaying = true
  let opened = false
  // Set at open when the chunks can go straight to the socket; otherwise the response takes the frames.
  let socket: Socket | undefined
  // What was written before the response head went out (a resync while joining): sent at open.
  let early: Uint8Array[] = []
  let queued = 0
  let highest = 0
  // Only a stream that was silent for a whole heartbeat period gets one (docs/events.md: "while idle"):
  // checked every half period, so the silence never exceeds heartbeatMs. A busy stream needs none;
  // 10,000 streams wrote 667 a second whatever else they carried (bench/sse.ts, issue 5).
  let silentChecks = 0

  /** Writes an HTTP/1.1 chunk (sse-chunks.ts) of one or more SSE frames. */
  function write(chunk: Uint8Array) {
    if (self.closed) return
    if (opened) put(chunk)
    else early.push(chunk)
  }

  function put(chunk: Uint8Array) {
    silentChecks = 0
    const sink = socket ?? response
    // Writes refused since the last 'drain': read here rather than reset by a listener on every stream.
    if (queued > 0 && !sink.writableNeedDrain) queued = 0
    const bytes = socket ? chunk : frameIn(chunk)
    if (!sink.write(bytes)) queued++
    countSent(bytes.byteLength)
  }

  function send(module: string, event: BroadcastEvent) {
    const state = modules.get(module)
    if (!state || event.tick <= state.last) return
    state.last = event.tick
    highest = Math.max(highest, event.tick)
    write(frameOf(event))
    onDelivered?.()
    if (queued > maxQueued) overflow()
  }

  function overflow() {
    resync('slow-consumer', highest)
    close()
  }

  function resync(reason: ResyncReason, tick: number, module?: string) {
    const data = module === undefined ? { reason, tick } : { reason, tick, module }
    write(toChunk(`id: ${tick}\nevent: resync\ndata: ${JSON.stringify(data)}\n\n`))
  }

  function close() {
    if (self.closed) return
    self.closed = true
    pending = []
    if (opened) end()
    onClose()
  }

  function end() {
    heartbeats.delete(self)
    if (!response.writableEnded) response.end()
    // A client that stopped reading would hold the ended stream (and its buffer) open forever.
    if (!response.writableFinished) setTimeout(() => response.destroy(), CLOSE_GRACE_MS).unref()
  }

  const self = {
    subjects,
    /** Addressee keys this subscriber receives items for (`m:<id>`, `a:<id>`). */
    keys: new Set(subjects.map(addresseeKeyOf)),
    /** True once the stream ended. A data property: a getter would put this object in dictionary mode, 0.8 kB more a stream. */
    closed: false,

    /** Starts accepting events of a module from one chunk; events up to `last` are dropped. */
    attach(module: string, chunk: number, last: number) {
      modules.set(module, { chunk, last })
    },

    /** A live event from a module's poller: held while replaying, sent otherwise. */
    offer(module: string, chunk: number, event: BroadcastEvent) {
      if (self.closed || modules.get(module)?.chunk !== chunk) return
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
      if (self.closed) return
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

    /**
     * Starts writing, once the caller wrote the response head: what was written before goes out
     * first, and a stream closed before it (overflowing while it joined) then ends.
     */
    open() {
      opened = true
      socket = directSocketOf(response)
      for (const chunk of early) put(chunk)
      early = []
      if (self.closed) return end()
      heartbeats.add(self)
    },

    /** Called by the heartbeat wheel every half period. */
    beat() {
      if (++silentChecks >= 2 && !(socket ?? response).writableNeedDrain) write(heartbeat)
    },

    /** Writes a frame outside the event sequence (typing): nothing a reconnect replays. */
    signal(chunk: Uint8Array) {
      if (opened) write(chunk)
    },

    /** Writes a comment line, which also makes the response headers go out. */
    comment(text: string) {
      write(toChunk(`: ${text}\n\n`))
    },

    /** Resolves when the client has read what was written (or the stream ended). */
    async drained(): Promise<void> {
      const sink = socket ?? response
      if (self.closed || !sink.writableNeedDrain) return
      const settled = new AbortController()
      await Promise.race([
        once(sink, 'drain', { signal: settled.signal }),
        once(response, 'close', { signal: settled.signal }),
      ]).finally(() => settled.abort())
    },

    close,
  }
  return self
}

export type Subscriber = ReturnType<typeof createSubscriber>
