import { pipeline, Readable, Transform } from 'node:stream'
import { ApiError, type ReplyView, type RequestView, sendError } from '@atrium/platform'
import type { Awaitable, GatewayRequest } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import { createConnectionWindow, createFixedWindow } from './fixed-window.ts'
import type { LimitLink } from './node-window.ts'
import { shareUsage, type UsageKey, type UsageShare } from './usage-share.ts'

export interface RateLimitOptions {
  settings: GatewayConfig['RateLimits']
  /** The gateway's clock (`store.now`), so tests can stand on a window's last millisecond. */
  now: () => number
}

/** The scopes of spec "Limits": which one refused is told in `error.details.scope`. */
export type RateLimitScope = 'connection' | 'session' | 'apiKey' | 'bandwidth'

/** Answers RateLimited (429) with Retry-After in whole seconds until the window ends. */
function refuse(reply: ReplyView, scope: RateLimitScope, retryAfterSeconds: number): ReplyView {
  reply.header('retry-after', String(retryAfterSeconds))
  return sendError(
    reply,
    new ApiError('RateLimited', `Too many requests for this ${scope}; retry in ${retryAfterSeconds} s`, {
      scope,
      retryAfterSeconds,
    }),
  )
}

/** The HTTP/2 session a request arrived on, or its TCP/TLS socket for HTTP/1.1. */
function connectionOf(request: RequestView): object {
  const raw = request.raw as unknown as { stream?: { session?: object }; socket: object }
  return raw.stream?.session ?? raw.socket
}

/** Refuses a request over its connection's limit by sending RateLimited. */
export type ConnectionCheck = (request: RequestView, reply: ReplyView) => ReplyView | undefined

/**
 * The per-connection limit (ARCHITECTURE.md, step 1 of a request). Checked before authentication
 * so that a flood of guessed credentials costs no database reads beyond it. Undefined when off.
 */
export function createConnectionLimit({ settings, now }: RateLimitOptions): ConnectionCheck | undefined {
  const { Requests, WindowSeconds } = settings.Connection
  if (Requests === 0) return undefined
  const take = createConnectionWindow(Requests, WindowSeconds, now)
  return function connectionLimit(request, reply) {
    const retryAfter = take(connectionOf(request))
    if (retryAfter > 0) return refuse(reply, 'connection', retryAfter)
  }
}

/** A request whose caller may not be known yet (a reply sent before authentication). */
type MaybeAuthenticated = RequestView & { caller?: GatewayRequest['caller'] }

/**
 * Who bandwidth is counted for: the session (its id, 64 hex digits), else the API key (its
 * number), else the client address (which has a dot or a colon), so no two can be the same key.
 * The session's id is the cached session's own string, whose hash the map has already computed:
 * a key built anew for each request would be hashed anew, twice per request.
 */
type BandwidthKey = string | number

function bandwidthKeyOf(request: MaybeAuthenticated): BandwidthKey {
  const caller = request.caller
  if (caller?.sessionId) return caller.sessionId
  if (caller?.apiKeyId) return caller.apiKeyId
  return request.ip
}

/**
 * A window of one limit scope: kept in this process (fixed-window.ts), or for the node's workers
 * together (node-window.ts), whose answers may wait for the primary.
 */
interface LimitWindow<K> {
  take(key: K, amount?: number): Awaitable<number>
  add(key: K, amount: number): Awaitable<void>
}

/**
 * Passes a stream through unchanged, reporting each chunk's size, and holding the chunk while the
 * count waits for the node's primary. `receivedEncodedLength` lets Fastify's body reader check the
 * body limit on the new stream.
 */
function counted(source: Readable, count: (bytes: number) => Awaitable<void>): Readable {
  const counter: Transform & { receivedEncodedLength?: number } = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      counter.receivedEncodedLength = (counter.receivedEncodedLength ?? 0) + chunk.length
      const counting = count(chunk.length)
      if (counting) counting.then(() => done(null, chunk))
      else done(null, chunk)
    },
  })
  return pipeline(source, counter, () => {})
}

/** A body that starts once `counting` settled: bytes past a worker's allowance go on after the primary counted them. */
function after(counting: Promise<void>, body: string | Uint8Array | Readable): Readable {
  return Readable.from(
    (async function* () {
      await counting
      if (typeof body === 'string' || body instanceof Uint8Array) yield body
      else yield* body
    })(),
    { objectMode: false },
  )
}

/** Counts a request body as it arrives: by its declared length, or chunk by chunk (chunked, HTTP/2). */
function countBody(bandwidth: LimitWindow<BandwidthKey>, request: GatewayRequest, payload: Readable): Readable {
  if (request.method === 'GET' || request.method === 'HEAD') return payload
  const declared = request.headers['content-length']
  if (declared !== undefined) {
    const counting = bandwidth.add(bandwidthKeyOf(request), Number(declared) || 0)
    return counting ? after(counting, payload) : payload
  }
  const key = bandwidthKeyOf(request)
  return counted(payload, (bytes) => bandwidth.add(key, bytes))
}

/** Counts a reply's body: its length, or chunk by chunk for a stream of unknown length. */
function countReply(
  bandwidth: LimitWindow<BandwidthKey>,
  request: MaybeAuthenticated,
  reply: ReplyView,
  payload: unknown,
) {
  if (request.method === 'HEAD' || payload === null || payload === undefined) return payload
  let length: number
  if (typeof payload === 'string') length = Buffer.byteLength(payload)
  else if (payload instanceof Uint8Array) length = payload.byteLength
  else if (typeof (payload as Readable).pipe === 'function') {
    const declared = reply.getHeader('content-length')
    const key = bandwidthKeyOf(request)
    if (declared === undefined) return counted(payload as Readable, (bytes) => bandwidth.add(key, bytes))
    const counting = bandwidth.add(key, Number(declared) || 0)
    return counting ? after(counting, payload as Readable) : payload
  } else return payload
  const counting = bandwidth.add(bandwidthKeyOf(request), length)
  if (!counting) return payload
  // Sent as a stream, the body would lose the length Fastify and the front door would give it.
  if (reply.getHeader('content-length') === undefined) reply.header('content-length', String(length))
  return after(counting, payload as string | Uint8Array)
}

/**
 * Counts the body bytes of a reply that a route writes itself: a hijacked reply (the SSE stream,
 * issue 5) passes no onSend hook, so its bytes go to the request's bandwidth key through this.
 */
export type SentMeter = (request: GatewayRequest) => (bytes: number) => void

const uncounted = () => {}

/**
 * The caller limits' parts, for Fastify's hooks and the front door alike: the admission check,
 * and the bandwidth counters of request bodies and replies (absent when nothing is limited).
 */
export interface CallerLimits {
  check?: (request: GatewayRequest, reply: ReplyView) => Awaitable<ReplyView | undefined>
  countBody?: (request: GatewayRequest, payload: Readable) => Readable
  countReply?: (request: MaybeAuthenticated, reply: ReplyView, payload: unknown) => unknown
  meterSent: SentMeter
  /** Stops reporting usage to the other gateway processes. */
  close?: () => void
}

/** How the caller limits count with other gateway processes. */
export interface LimitSharing {
  /** Every gateway process on one PostgreSQL gateway database: approximate, reported every 100 ms. */
  share?: UsageShare
  /** The node's workers, through their primary: exact for the node. */
  workers?: LimitLink
  /** This node's NodeNumber: with `workers`, the share's reports of this node's own processes are skipped. */
  node?: number
}

/** One scope's check: its window, and the caller's key in it (none: the scope does not apply). */
interface Step {
  scope: RateLimitScope
  window: LimitWindow<UsageKey>
  keyOf: (request: GatewayRequest) => UsageKey | undefined
  /** What an admitted request counts: one request, or nothing for bandwidth (its bytes count as they flow). */
  amount: number
}

/**
 * The session, API-key and bandwidth limits (ARCHITECTURE.md, step 6), checked after
 * authentication sets `request.caller`. Each scope is a fixed window kept in memory: no database
 * access per request. A request is admitted while its scope's window total is below the limit;
 * bytes count as they flow, so the request that crosses the bandwidth limit finishes and the next
 * one in that window is refused. `meterSent` counts replies that routes write themselves. With
 * `workers` the windows are the node's (node-window.ts); with a `share` they count the other
 * gateway processes' uses too.
 */
export function createCallerLimits(
  { settings, now }: RateLimitOptions,
  { share, workers, node }: LimitSharing = {},
): CallerLimits {
  const { Session, ApiKey, Bandwidth } = settings
  const usage = share ? shareUsage(share, { node: workers && node }) : undefined
  function window<K extends UsageKey>(scope: string, limit: number, windowSeconds: number) {
    const counted = usage?.counter(scope)
    return workers
      ? workers.window<K>(scope, limit, windowSeconds, now, counted)
      : createFixedWindow<K>(limit, windowSeconds, now, counted)
  }
  const session = Session.Requests > 0 ? window<string>('session', Session.Requests, Session.WindowSeconds) : null
  const apiKey = ApiKey.Requests > 0 ? window<number>('apiKey', ApiKey.Requests, ApiKey.WindowSeconds) : null
  const bandwidth =
    Bandwidth.Bytes > 0 ? window<BandwidthKey>('bandwidth', Bandwidth.Bytes, Bandwidth.WindowSeconds) : null
  usage?.count({ session, apiKey, bandwidth })
  if (!session && !apiKey && !bandwidth) return { meterSent: () => uncounted }

  const steps: Step[] = []
  if (session)
    steps.push({ scope: 'session', window: session, keyOf: (r) => r.caller?.sessionId || undefined, amount: 1 })
  if (apiKey) steps.push({ scope: 'apiKey', window: apiKey, keyOf: (r) => r.caller?.apiKeyId || undefined, amount: 1 })
  if (bandwidth) steps.push({ scope: 'bandwidth', window: bandwidth, keyOf: bandwidthKeyOf, amount: 0 })

  /** Checks the scopes from `from` on: at once, unless a node window waits for its primary. */
  function checkFrom(request: GatewayRequest, reply: ReplyView, from: number): Awaitable<ReplyView | undefined> {
    for (let index = from; index < steps.length; index++) {
      const { scope, window, keyOf, amount } = steps[index]!
      const key = keyOf(request)
      if (key === undefined) continue
      const retryAfter = window.take(key, amount)
      if (retryAfter instanceof Promise) {
        return retryAfter.then((wait) => (wait > 0 ? refuse(reply, scope, wait) : checkFrom(request, reply, index + 1)))
      }
      if (retryAfter > 0) return refuse(reply, scope, retryAfter)
    }
  }
  const check = (request: GatewayRequest, reply: ReplyView) => checkFrom(request, reply, 0)
  const close = usage?.close
  if (!bandwidth) return { check, meterSent: () => uncounted, close }
  return {
    check,
    close,
    countBody: (request, payload) => countBody(bandwidth, request, payload),
    countReply: (request, reply, payload) => countReply(bandwidth, request, reply, payload),
    meterSent(request) {
      const key = bandwidthKeyOf(request)
      return (bytes) => void bandwidth.add(key, bytes)
    },
  }
}
