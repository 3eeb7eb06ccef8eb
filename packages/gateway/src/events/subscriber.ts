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
 *
 * A class, so that its methods are shared by every stream: as closures over one function's scope
 * they cost each of 2,000 streams about 1 KB of heap (docs/benchmarks.md, "What an SSE stream holds
 * in the gateway's heap"). Methods handed out as callbacks must be bound by the caller.
 */
export class Subscriber {
  readonly subjects: readonly string[]
  /** Addressee keys this subscriber receives items for (`m:<id>`, `a:<id>`). */
  readonly keys: Set<string>
  /** True once the stream ended. */
  closed = false

  readonly #options: SubscriberOptions
  readonly #modules = new Map<string, ModuleState>()
  #pending: { module: string; event: BroadcastEvent }[] = []
  #replaying = true
  #opened = false
  // Set at open when the chunks can go straight to the socket; otherwise the response takes the frames.
  #socket: Socket | undefined
  // What was written before the response head went out (a resync while joining): sent at open.
  #early: Uint8Array[] = []
  #queued = 0
  #highest = 0
  // Only a stream that was silent for a whole heartbeat period gets one (docs/events.md: "while idle"):
  // checked every half period, so the silence never exceeds heartbeatMs. A busy stream needs none;
  // 10,000 streams wrote 667 a second whatever else they carried (bench/sse.ts, issue 5).
  #silentChecks = 0

  constructor(options: SubscriberOptions) {
    this.#options = options
    this.subjects = options.subjects
    this.keys = new Set(options.subjects.map(addresseeKeyOf))
  }

  /** Writes an HTTP/1.1 chunk (sse-chunks.ts) of one or more SSE frames. */
  #write(chunk: Uint8Array) {
    if (this.closed) return
    if (this.#opened) this.#put(chunk)
    else this.#early.push(chunk)
  }

  #put(chunk: Uint8Array) {
    this.#silentChecks = 0
    const socket = this.#socket
    const sink = socket ?? this.#options.response
    // Writes refused since the last 'drain': read here rather than reset by a listener on every stream.
    if (this.#queued > 0 && !sink.writableNeedDrain) this.#queued = 0
    const bytes = socket ? chunk : frameIn(chunk)
    if (!sink.write(bytes)) this.#queued++
    this.#options.countSent(bytes.byteLength)
  }

  #send(module: string, event: BroadcastEvent) {
    const state = this.#modules.get(module)
    if (!state || event.tick <= state.last) return
    state.last = event.tick
    this.#highest = Math.max(this.#highest, event.tick)
    this.#write(this.#options.frameOf(event))
    this.#options.onDelivered?.()
    if (this.#queued > this.#options.maxQueued) this.#overflow()
  }

  #overflow() {
    this.resync('slow-consumer', this.#highest)
    this.close()
  }

  #end() {
    const { response, heartbeats } = this.#options
    heartbeats.delete(this)
    if (!response.writableEnded) response.end()
    // A client that stopped reading would hold the ended stream (and its buffer) open forever.
    if (!response.writableFinished) setTimeout(() => response.destroy(), CLOSE_GRACE_MS).unref()
  }

  /** Starts accepting events of a module from one chunk; events up to `last` are dropped. */
  attach(module: string, chunk: number, last: number) {
    this.#modules.set(module, { chunk, last })
  }

  /** A live event from a module's poller: held while replaying, sent otherwise. */
  offer(module: string, chunk: number, event: BroadcastEvent) {
    if (this.closed || this.#modules.get(module)?.chunk !== chunk) return
    if (!this.#replaying) return this.#send(module, event)
    this.#pending.push({ module, event })
    if (this.#pending.length > this.#options.maxQueued) this.#overflow()
  }

  /** An event of the replay, in tick order. */
  replayed(module: string, event: BroadcastEvent) {
    this.#send(module, event)
  }

  /** Ends the replay: the held live events above each module's floor follow, in tick order. */
  goLive(floors: ReadonlyMap<string, number>) {
    if (this.closed) return
    for (const [module, floor] of floors) {
      const state = this.#modules.get(module)
      if (state) state.last = Math.max(state.last, floor)
    }
    const held = this.#pending
    this.#pending = []
    this.#replaying = false
    held.sort((a, b) => a.event.tick - b.event.tick)
    for (const { module, event } of held) this.#send(module, event)
  }

  resync(reason: ResyncReason, tick: number, module?: string) {
    const data = module === undefined ? { reason, tick } : { reason, tick, module }
    this.#write(toChunk(`id: ${tick}\nevent: resync\ndata: ${JSON.stringify(data)}\n\n`))
  }

  /**
   * Starts writing, once the caller wrote the response head: what was written before goes out
   * first, and a stream closed before it (overflowing while it joined) then ends.
   */
  open() {
    this.#opened = true
    this.#socket = directSocketOf(this.#options.response)
    for (const chunk of this.#early) this.#put(chunk)
    this.#early = []
    if (this.closed) return this.#end()
    this.#options.heartbeats.add(this)
  }

  /** Called by the heartbeat wheel every half period. */
  beat() {
    const sink = this.#socket ?? this.#options.response
    if (++this.#silentChecks >= 2 && !sink.writableNeedDrain) this.#write(this.#options.heartbeat ?? HEARTBEAT)
  }

  /** Writes a frame outside the event sequence (typing): nothing a reconnect replays. */
  signal(chunk: Uint8Array) {
    if (this.#opened) this.#write(chunk)
  }

  /** Writes a comment line, which also makes the response headers go out. */
  comment(text: string) {
    this.#write(toChunk(`: ${text}\n\n`))
  }

  /** Resolves when the client has read what was written (or the stream ended). */
  async drained(): Promise<void> {
    const { response } = this.#options
    const sink = this.#socket ?? response
    if (this.closed || !sink.writableNeedDrain) return
    const settled = new AbortController()
    await Promise.race([
      once(sink, 'drain', { signal: settled.signal }),
      once(response, 'close', { signal: settled.signal }),
    ]).finally(() => settled.abort())
  }

  /** Ends the stream (once, whoever ends it) and tells `onClose`. */
  close() {
    if (this.closed) return
    this.closed = true
    this.#pending = []
    if (this.#opened) this.#end()
    this.#options.onClose()
  }
}
