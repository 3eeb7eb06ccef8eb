import { pipeline, type Readable, Transform } from 'node:stream'
import { ApiError, type ReplyView, type RequestView, sendError } from '@atrium/platform'
import type { GatewayRequest } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import { createConnectionWindow, createFixedWindow, type FixedWindow } from './fixed-window.ts'
import { shareUsage, type UsageShare } from './usage-share.ts'

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
 * Passes a stream through unchanged, reporting each chunk's size. `receivedEncodedLength` lets
 * Fastify's body reader check the body limit on the new stream.
 */
function counted(source: Readable, count: (bytes: number) => void): Readable {
  const counter: Transform & { receivedEncodedLength?: number } = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      counter.receivedEncodedLength = (counter.receivedEncodedLength ?? 0) + chunk.length
      count(chunk.length)
      done(null, chunk)
    },
  })
  return pipeline(source, counter, () => {})
}

/** Counts a request body as it arrives: by its declared length, or chunk by chunk (chunked, HTTP/2). */
function countBody(bandwidth: FixedWindow<BandwidthKey>, request: GatewayRequest, payload: Readable): Readable {
  if (request.method === 'GET' || request.method === 'HEAD') return payload
  const declared = request.headers['content-length']
  if (declared !== undefined) {
    bandwidth.add(bandwidthKeyOf(request), Number(declared) || 0)
    return payload
  }
  const key = bandwidthKeyOf(request)
  return counted(payload, (bytes) => bandwidth.add(key, bytes))
}

/** Counts a reply's body: its length, or chunk by chunk for a stream of unknown length. */
function countReply(
  bandwidth: FixedWindow<BandwidthKey>,
  request: MaybeAuthenticated,
  reply: ReplyView,
  payload: unknown,
) {
  if (request.method === 'HEAD' || payload === null || payload === undefined) return payload
  if (typeof payload === 'string') bandwidth.add(bandwidthKeyOf(request), Buffer.byteLength(payload))
  else if (payload instanceof Uint8Array) bandwidth.add(bandwidthKeyOf(request), payload.byteLength)
  else if (typeof (payload as Readable).pipe === 'function') {
    const declared = reply.getHeader('content-length')
    const key = bandwidthKeyOf(request)
    if (declared !== undefined) bandwidth.add(key, Number(declared) || 0)
    else return counted(payload as Readable, (bytes) => bandwidth.add(key, bytes))
  }
  return payload
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
  check?: (request: GatewayRequest, reply: ReplyView) => ReplyView | undefined
  countBody?: (request: GatewayRequest, payload: Readable) => Readable
  countReply?: (request: MaybeAuthenticated, reply: ReplyView, payload: unknown) => unknown
  meterSent: SentMeter
  /** Stops reporting usage to the other gateway processes. */
  close?: () => void
}

/**
 * The session, API-key and bandwidth limits (ARCHITECTURE.md, step 6), checked after
 * authentication sets `request.caller`. Each scope is a fixed window kept in memory: no database
 * access per request. A request is admitted while its scope's window total is below the limit;
 * bytes count as they flow, so the request that crosses the bandwidth limit finishes and the next
 * one in that window is refused. `meterSent` counts replies that routes write themselves. With a
 * `share`, the windows count the other gateway processes' uses too.
 */
export function createCallerLimits({ settings, now }: RateLimitOptions, share?: UsageShare): CallerLimits {
  const { Session, ApiKey, Bandwidth } = settings
  const usage = share ? shareUsage(share) : undefined
  const session =
    Session.Requests > 0
      ? createFixedWindow<string>(Session.Requests, Session.WindowSeconds, now, usage?.counter('session'))
      : null
  const apiKey =
    ApiKey.Requests > 0
      ? createFixedWindow<number>(ApiKey.Requests, ApiKey.WindowSeconds, now, usage?.counter('apiKey'))
      : null
  const bandwidth =
    Bandwidth.Bytes > 0
      ? createFixedWindow<BandwidthKey>(Bandwidth.Bytes, Bandwidth.WindowSeconds, now, usage?.counter('bandwidth'))
      : null
  usage?.count({ session, apiKey, bandwidth })
  if (!session && !apiKey && !bandwidth) return { meterSent: () => uncounted }

  function check(request: GatewayRequest, reply: ReplyView): ReplyView | undefined {
    const caller = request.caller
    if (session && caller?.sessionId) {
      const retryAfter = session.take(caller.sessionId)
      if (retryAfter > 0) return refuse(reply, 'session', retryAfter)
    }
    if (apiKey && caller?.apiKeyId) {
      const retryAfter = apiKey.take(caller.apiKeyId)
      if (retryAfter > 0) return refuse(reply, 'apiKey', retryAfter)
    }
    if (bandwidth) {
      const retryAfter = bandwidth.take(bandwidthKeyOf(request), 0)
      if (retryAfter > 0) return refuse(reply, 'bandwidth', retryAfter)
    }
  }
  const close = usage?.close
  if (!bandwidth) return { check, meterSent: () => uncounted, close }
  return {
    check,
    close,
    countBody: (request, payload) => countBody(bandwidth, request, payload),
    countReply: (request, reply, payload) => countReply(bandwidth, request, reply, payload),
    meterSent(request) {
      const key = bandwidthKeyOf(request)
      return (bytes) => bandwidth.add(key, bytes)
    },
  }
}
