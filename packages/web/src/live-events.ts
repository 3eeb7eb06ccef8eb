/**
 * The client side of the gateway's SSE channel (spec: "SSE rules"; docs/events.md, "The client
 * rule"): keep the largest tick seen, and after any break reconnect with `since=<that tick>` so the
 * gateway replays what was missed. Framework-free: it takes the EventSource constructor, so it runs
 * in browsers (the global one) and in Node tests (the `eventsource` package).
 */

/** One SSE message of `/auth/v1/subscribe` (spec: "BroadcastEvent (SSE message)"). */
export interface BroadcastEvent {
  module: string
  /** The event's cursor tick; ticks of all modules are timeticks and compare by time. */
  tick: number
  type: string
  data: Record<string, unknown>
}

/** The gateway's `event: resync`: events were lost for this client, which must reload its state. */
export interface Resync {
  /** `too-old` (since is past the replay window), `slow-consumer` (the stream fell behind and was closed), `replay-failed` (a module could not replay). */
  reason: string
  /** Where the stream continues from. */
  tick: number
  /** The module that could not replay (`replay-failed` only). */
  module?: string
}

export type LiveStatus = 'connecting' | 'live' | 'offline'

/** The part of the EventSource interface this module uses. */
export interface EventSourceLike {
  addEventListener(type: string, listener: (event: { data?: unknown }) => void): void
  close(): void
}

/** An EventSource constructor: `globalThis.EventSource`, or the `eventsource` package's in Node. */
export type EventSourceConstructor = new (url: string, init?: { withCredentials?: boolean }) => EventSourceLike

/** Where the largest tick survives a page reload; `localStorage` fits. */
export interface TickStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
}

/** A typing frame: `user` is typing in `chat_id`; show it for `expires_ms` unless renewed. */
export interface TypingSignal {
  chat_id: string
  user: string
  expires_ms: number
}

function parseTyping(data: unknown): TypingSignal | undefined {
  try {
    const value = JSON.parse(String(data)) as Partial<TypingSignal>
    if (typeof value.chat_id !== 'string' || typeof value.user !== 'string') return undefined
    return { chat_id: value.chat_id, user: value.user, expires_ms: Number(value.expires_ms) || 6000 }
  } catch {
    return undefined
  }
}

export interface LiveEventsOptions {
  /** Receives each event once, in the order it arrived. */
  onEvent(event: BroadcastEvent): void
  /** Events were lost: fetch the state again (chat lists, unread counts, balances). */
  onResync?(resync: Resync): void
  onStatus?(status: LiveStatus): void
  /**
   * Someone is typing in a chat (an `event: typing` frame, docs/events.md "Typing and presence"):
   * not an event, so it has no tick and is never replayed.
   */
  onTyping?(signal: TypingSignal): void
  /** The stream's address; default `/auth/v1/subscribe` on the page's origin. */
  url?: string
  /** Default: the global EventSource. */
  EventSource?: EventSourceConstructor
  /** Keeps the largest tick across reloads; without it a new page starts fresh. */
  storage?: TickStorage
  storageKey?: string
  /** Back-off before a reconnect: from `minMs`, doubling with jitter up to `maxMs`. */
  retry?: { minMs: number; maxMs: number }
  /** The shortest silence taken for a dead stream; default MIN_SILENCE_MS. */
  minSilenceMs?: number
}

/** An open live-events connection. */
export interface LiveEvents {
  /** The largest tick seen (0 before any). */
  readonly maxTick: number
  /** Stops for good: the stream is closed and no reconnect follows. */
  close(): void
}

const DEFAULT_URL = '/auth/v1/subscribe'
const DEFAULT_STORAGE_KEY = 'atrium.events.maxTick'
const DEFAULT_RETRY = { minMs: 1000, maxMs: 30_000 }
/**
 * A stream silent for this many of the gateway's heartbeat periods is taken for dead: a gateway
 * whose host went away leaves the connection open, and no error ever comes. The gateway writes
 * something at least once a period (docs/events.md).
 */
export const SILENT_PERIODS = 2.5
/**
 * Never less than this, however short the period: a page or gateway that stalls for a second or
 * two under load (seen with 1-second heartbeats in tests) is not a dead stream, and a stream
 * opened again without a tick would miss what came meanwhile.
 */
export const MIN_SILENCE_MS = 5000

/**
 * Opens the caller's event stream with the session cookie. Each event is delivered once: an event
 * whose tick is not above the last one of its module is dropped (a module's events arrive in tick
 * order; events of different modules may interleave, so this is kept per module). Any error or end
 * of the stream closes it and, after a back-off, opens it again with `since=<largest tick>`; the
 * browser's own reconnect is not used, so the `since` is always the largest tick. A `resync` from
 * the gateway raises the largest tick to where the stream continues and calls `onResync`. The
 * stream asks for heartbeat messages (`heartbeat=event`) and is opened again like a broken one
 * when it stays silent for SILENT_PERIODS of the period they announce.
 */
export function openLiveEvents(options: LiveEventsOptions): LiveEvents {
  const Found = options.EventSource ?? (globalThis as { EventSource?: EventSourceConstructor }).EventSource
  if (!Found) throw new Error('no EventSource: pass one in options.EventSource')
  const Source: EventSourceConstructor = Found
  const url = options.url ?? DEFAULT_URL
  const storageKey = options.storageKey ?? DEFAULT_STORAGE_KEY
  const retry = options.retry ?? DEFAULT_RETRY
  const minSilenceMs = options.minSilenceMs ?? MIN_SILENCE_MS
  const lastByModule = new Map<string, number>()
  let maxTick = storedTick()
  let source: EventSourceLike | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let failures = 0
  let closed = false
  // How long the stream may stay silent: 0 until the gateway told its heartbeat period (an older
  // gateway sends heartbeats as comments, which an EventSource cannot see, and is never timed).
  let silenceMs = 0
  let watchdog: ReturnType<typeof setTimeout> | undefined

  function storedTick(): number {
    const text = options.storage?.getItem(storageKey) ?? null
    const tick = text === null ? 0 : Number(text)
    return Number.isSafeInteger(tick) && tick > 0 ? tick : 0
  }

  function raise(tick: number) {
    if (tick <= maxTick) return
    maxTick = tick
    options.storage?.setItem(storageKey, String(tick))
  }

  /** Something arrived on the stream (or it was just opened): it may stay silent for silenceMs from now. */
  function heard(current: EventSourceLike) {
    clearTimeout(watchdog)
    if (silenceMs > 0) watchdog = setTimeout(() => source === current && fail(current), silenceMs)
  }

  /** The stream broke or went silent: closed here, and opened again after a back-off. */
  function fail(current: EventSourceLike) {
    clearTimeout(watchdog)
    current.close()
    source = undefined
    options.onStatus?.('offline')
    failures++
    timer = setTimeout(connect, backoffMs(failures, retry))
  }

  function connect() {
    if (closed) return
    options.onStatus?.('connecting')
    const resume = maxTick > 0 ? `since=${maxTick}&` : ''
    const address = `${url}${url.includes('?') ? '&' : '?'}${resume}heartbeat=event`
    const current = new Source(address, { withCredentials: true })
    source = current
    heard(current)
    current.addEventListener('open', () => {
      if (source !== current) return
      failures = 0
      options.onStatus?.('live')
    })
    current.addEventListener('heartbeat', (message) => {
      if (source !== current) return
      const seconds = Number(message.data)
      if (Number.isFinite(seconds) && seconds > 0) silenceMs = Math.max(minSilenceMs, seconds * 1000 * SILENT_PERIODS)
      heard(current)
    })
    current.addEventListener('message', (message) => {
      if (source !== current) return
      heard(current)
      const event = parseEvent(message.data)
      if (!event) return
      const last = lastByModule.get(event.module) ?? 0
      if (event.tick <= last) return
      lastByModule.set(event.module, event.tick)
      raise(event.tick)
      options.onEvent(event)
    })
    current.addEventListener('resync', (message) => {
      if (source !== current) return
      heard(current)
      const resync = parseResync(message.data)
      if (!resync) return
      raise(resync.tick)
      options.onResync?.(resync)
    })
    current.addEventListener('typing', (message) => {
      if (source !== current) return
      heard(current)
      const signal = parseTyping(message.data)
      if (signal) options.onTyping?.(signal)
    })
    current.addEventListener('error', () => {
      if (source === current) fail(current)
    })
  }

  connect()
  return {
    get maxTick() {
      return maxTick
    },
    close() {
      closed = true
      clearTimeout(timer)
      clearTimeout(watchdog)
      source?.close()
      source = undefined
    },
  }
}

/** Doubling from `minMs` per failure, capped at `maxMs`, with jitter so clients do not reconnect in step. */
export function backoffMs(failures: number, { minMs, maxMs }: { minMs: number; maxMs: number }): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(failures - 1, 30))
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
}

function parseJson(data: unknown): Record<string, unknown> | undefined {
  if (typeof data !== 'string') return undefined
  try {
    const value: unknown = JSON.parse(data)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

function isTick(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/** A BroadcastEvent, or undefined for anything else (which is ignored). */
function parseEvent(data: unknown): BroadcastEvent | undefined {
  const value = parseJson(data)
  if (!value || typeof value.module !== 'string' || typeof value.type !== 'string' || !isTick(value.tick)) {
    return undefined
  }
  const payload = value.data
  const eventData = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : {}
  return { module: value.module, tick: value.tick, type: value.type, data: eventData }
}

function parseResync(data: unknown): Resync | undefined {
  const value = parseJson(data)
  if (!value || typeof value.reason !== 'string' || !isTick(value.tick)) return undefined
  return typeof value.module === 'string'
    ? { reason: value.reason, tick: value.tick, module: value.module }
    : { reason: value.reason, tick: value.tick }
}
