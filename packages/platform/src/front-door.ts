import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { finished, type Readable } from 'node:stream'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import FindMyWay from 'find-my-way'
import { requestIdFor, sendError, toApiError } from './envelope.ts'
import { runWithRequestId } from './request-context.ts'
import type { Authority, RequestTarget } from './request-target.ts'
import { drainUnreadBody } from './unread-body.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Names the front-door handler that answers this route's requests ahead of Fastify
     * (`handleAtFrontDoor`); Fastify's own handler stays for `inject` and as the fallback.
     */
    frontDoor?: string
  }
}

/** What the platform's checks and the gateway's request hooks read of a request: Fastify's and the front door's share it. */
export interface RequestView {
  readonly id: string
  readonly raw: IncomingMessage
  readonly headers: IncomingHttpHeaders
  readonly method: string
  readonly url: string
  readonly ip: string
  readonly host: string
  readonly protocol: 'http' | 'https'
  readonly socket: Socket
  readonly log: FastifyBaseLogger
  authority: Authority
  target: RequestTarget
  metricsRoute: string
  body: unknown
}

/** What answering code uses of a reply: Fastify's and the front door's share it. */
export interface ReplyView {
  readonly request: { readonly id: string }
  readonly raw: ServerResponse
  readonly sent: boolean
  readonly statusCode: number
  code(statusCode: number): ReplyView
  header(name: string, value: unknown): ReplyView
  headers(values: Record<string, unknown>): ReplyView
  getHeader(name: string): unknown
  removeHeader(name: string): ReplyView
  type(contentType: string): ReplyView
  send(payload?: unknown): ReplyView
}

/** A response hook of the front door: sees the payload before it is written and may replace it (a counting stream). */
export type FrontSendHook = (request: FrontRequest, reply: FrontReply, payload: unknown) => unknown

/** Answers requests of the routes marked `frontDoor` with its name. */
export interface FrontHandler {
  /**
   * Whether to answer this request here (the Host and target already passed the guard); false
   * leaves it to Fastify. Asked before anything is counted or sent. Default: every request.
   */
  claims?: (request: FrontRequest) => boolean
  /**
   * Answers the request, with the route parameters and the parsed query string as Fastify would
   * give them (unvalidated). A thrown or rejected error is answered in the envelope.
   */
  answer: (
    request: FrontRequest,
    reply: FrontReply,
    params: Record<string, string | undefined>,
    query: Record<string, unknown>,
  ) => unknown
}

function lastEntry(value: string): string {
  const comma = value.lastIndexOf(',')
  return comma === -1 ? value.trim() : value.slice(comma + 1).trim()
}

/** The parts of a service the front door's requests and replies share. */
interface FrontRuntime {
  log: FastifyBaseLogger
  logRequests: boolean
  /** Fastify's trust-proxy rule, the same function (`@fastify/proxy-addr`). */
  trusted: ((address: string, hop: number) => boolean) | undefined
  onSend: FrontSendHook[]
  observe: (method: string, route: string, status: number, seconds: number) => void
  closing: () => boolean
}

/** A request answered at the front door: the `RequestView` of a raw request, read as Fastify reads it. */
export class FrontRequest implements RequestView {
  readonly id: string
  readonly raw: IncomingMessage
  readonly headers: IncomingHttpHeaders
  readonly method: string
  readonly url: string
  authority!: Authority
  target!: RequestTarget
  metricsRoute = ''
  body: unknown = undefined
  /** When the front door took the request (`performance.now()`), for the metrics and logs. */
  readonly startedAt = performance.now()
  private readonly runtime: FrontRuntime
  private logger: FastifyBaseLogger | undefined

  constructor(raw: IncomingMessage, runtime: FrontRuntime) {
    this.raw = raw
    this.headers = raw.headers
    this.method = raw.method ?? 'GET'
    this.url = raw.url ?? '/'
    this.id = requestIdFor(raw)
    this.runtime = runtime
  }

  get socket(): Socket {
    return this.raw.socket
  }

  get log(): FastifyBaseLogger {
    this.logger ??= this.runtime.log.child({ reqId: this.id })
    return this.logger
  }

  /** The peer, or from a trusted proxy the rightmost untrusted X-Forwarded-For entry (Fastify's `request.ip`). */
  get ip(): string {
    const trusted = this.runtime.trusted
    if (trusted === undefined) return this.raw.socket.remoteAddress ?? ''
    const all = proxyAddr.all(this.raw, trusted)
    return all[all.length - 1] ?? ''
  }

  private fromTrustedProxy(): boolean {
    const trusted = this.runtime.trusted
    return trusted?.(this.raw.socket.remoteAddress ?? '', 0) === true
  }

  get host(): string {
    const forwarded = this.headers['x-forwarded-host']
    if (typeof forwarded === 'string' && forwarded && this.fromTrustedProxy()) return lastEntry(forwarded)
    return this.headers.host ?? (this.headers[':authority'] as string | undefined) ?? ''
  }

  get protocol(): 'http' | 'https' {
    const forwarded = this.headers['x-forwarded-proto']
    if (typeof forwarded === 'string' && forwarded && this.fromTrustedProxy()) {
      return lastEntry(forwarded) as 'http' | 'https'
    }
    return (this.raw.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http'
  }
}

/**
 * The reply of a front-door request: headers kept until `send`, which runs the response hooks
 * (the platform's, then the service's) and writes the status, headers and payload (a string, a
 * buffer or a stream) to the raw response once.
 */
export class FrontReply implements ReplyView {
  readonly request: FrontRequest
  readonly raw: ServerResponse
  statusCode = 200
  sent = false
  /** Set by `hijack`: the handler writes the raw response itself and counts and logs it itself. */
  hijacked = false
  private fields: Record<string, unknown> = {}
  private readonly runtime: FrontRuntime

  constructor(request: FrontRequest, raw: ServerResponse, runtime: FrontRuntime) {
    this.request = request
    this.raw = raw
    this.runtime = runtime
  }

  code(statusCode: number): this {
    if (!Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) {
      throw new RangeError(`invalid status code ${statusCode}`)
    }
    this.statusCode = statusCode
    return this
  }

  header(name: string, value: unknown): this {
    const key = name.toLowerCase()
    const before = this.fields[key]
    // As Fastify does: Set-Cookie accumulates, every other header is replaced.
    if (key === 'set-cookie' && before !== undefined) {
      this.fields[key] = ([] as unknown[]).concat(before, value)
    } else this.fields[key] = value
    return this
  }

  headers(values: Record<string, unknown>): this {
    for (const name in values) if (values[name] !== undefined) this.header(name, values[name])
    return this
  }

  getHeader(name: string): unknown {
    return this.fields[name.toLowerCase()]
  }

  removeHeader(name: string): this {
    delete this.fields[name.toLowerCase()]
    return this
  }

  /** The headers set so far (lower-case names), for a handler that writes the raw response itself. */
  getHeaders(): Record<string, unknown> {
    return { ...this.fields }
  }

  /** Hands the raw response to the handler, as Fastify's `reply.hijack()`: no send hooks, metrics or access log. */
  hijack(): void {
    this.sent = true
    this.hijacked = true
  }

  type(contentType: string): this {
    return this.header('content-type', contentType)
  }

  send(payload?: unknown): this {
    if (this.sent) {
      this.request.log.warn('the reply was already sent')
      return this
    }
    this.sent = true
    applyConnectionRules(this.request.raw, this, this.runtime.closing())
    let body = payload
    for (const hook of this.runtime.onSend) body = hook(this.request, this, body)
    this.write(body)
    return this
  }

  private write(payload: unknown): void {
    const response = this.raw
    const fields = this.fields
    if (payload !== null && typeof payload === 'object' && typeof (payload as Readable).pipe === 'function') {
      const stream = payload as Readable
      response.writeHead(this.statusCode, fields as Record<string, string>)
      stream.pipe(response)
      // A failed source cuts the answer; a client gone stops the source.
      finished(response, () => {
        if (!stream.readableEnded) stream.destroy()
      })
      stream.once('error', (error) => response.destroy(error))
      return
    }
    const body = payload === undefined || payload === null ? undefined : (payload as string | Uint8Array)
    if (fields['content-length'] === undefined && this.statusCode !== 204 && this.statusCode !== 304) {
      fields['content-length'] =
        body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length
    }
    response.writeHead(this.statusCode, fields as Record<string, string>)
    response.end(body)
  }
}

/**
 * Whether an HTTP/1.1 request carries a body (RFC 9112 §6.3: Transfer-Encoding or a non-zero
 * Content-Length). One without is not `complete` while its own request event runs, since Node
 * marks the end of the message after it, yet there is nothing left to read.
 */
function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length']
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/**
 * The service's rules for an HTTP/1.1 answer (Fastify's onSend hook in service.ts and the front
 * door's replies): a keep-alive connection whose request was in flight at the stop signal gets
 * `Connection: close`, so it does not hold the close until the drain timeout (HTTP/2 forbids the
 * header; its sessions get a GOAWAY instead). An answer sent before the whole body arrived (an
 * early 413, or a module that answered first) keeps the connection and reads the rest once it is
 * written: closing while the peer still sends resets the connection, and the peer (the gateway)
 * can lose this answer (docs/security.md).
 */
export function applyConnectionRules(request: IncomingMessage, reply: ReplyView, closing: boolean): void {
  if (request.httpVersionMajor !== 1) return
  if (closing) reply.header('connection', 'close')
  else if (!request.complete && hasBody(request)) {
    reply.removeHeader('connection')
    reply.raw.once('finish', () => drainUnreadBody(request))
  }
}

export interface FrontDoorOptions {
  log: FastifyBaseLogger
  /** The service's trustProxy list (addresses or CIDR ranges); none trusts no proxy. */
  trustedProxies?: readonly string[]
  /** Checks the Host and target as the domain guard does; throws an ApiError to leave the request to Fastify. */
  guard: (request: FrontRequest) => void
  observe: FrontRuntime['observe']
  closing: () => boolean
}

/**
 * The front door of a service (ARCHITECTURE-style description in docs/architecture.md): requests
 * whose route is marked `config.frontDoor` are answered by that handler straight from Node's
 * request event, without Fastify's per-request objects and hook chain; every other request,
 * and any request the guard would refuse, goes to Fastify unchanged. Routing is Fastify's: a copy
 * of its route table (same router, same options) says which route a request would reach.
 */
export function createFrontDoor(app: FastifyInstance, options: FrontDoorOptions) {
  const handlers = new Map<string, FrontHandler>()
  const routes: { method: string | string[]; url: string; kind: string | null }[] = []
  type Store = { kind: string | null; url: string }
  let router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1> | undefined
  const runtime: FrontRuntime = {
    log: options.log,
    logRequests: (options.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') ?? false,
    trusted: options.trustedProxies?.length ? proxyAddr.compile([...options.trustedProxies]) : undefined,
    onSend: [],
    observe: options.observe,
    closing: options.closing,
  }

  app.addHook('onRoute', (route) => {
    routes.push({ method: route.method, url: route.url, kind: route.config?.frontDoor ?? null })
  })
  app.addHook('onReady', async () => {
    if (handlers.size === 0) return
    const table = FindMyWay()
    for (const { method, url, kind } of routes) {
      for (const one of Array.isArray(method) ? method : [method]) {
        table.on(one as FindMyWay.HTTPMethod, url, () => {}, { kind, url } satisfies Store)
      }
    }
    router = table
  })

  function fail(request: FrontRequest, reply: FrontReply, error: unknown) {
    const apiError = toApiError(error as Error)
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed')
    else request.log.info({ code: apiError.code }, apiError.message)
    if (!reply.sent && !reply.raw.headersSent) sendError(reply, apiError)
    else reply.raw.destroy()
  }

  function answer(
    request: FrontRequest,
    reply: FrontReply,
    handler: FrontHandler,
    { params, searchParams }: { params: Record<string, string | undefined>; searchParams: Record<string, unknown> },
  ) {
    try {
      const result = handler.answer(request, reply, params, searchParams)
      if (result instanceof Promise) result.catch((error) => fail(request, reply, error))
    } catch (error) {
      fail(request, reply, error)
    }
  }

  /** Answers the request here and returns true, or returns false to leave it to Fastify. */
  function take(raw: IncomingMessage, response: ServerResponse): boolean {
    if (router === undefined || runtime.closing()) return false
    const found = router.find(raw.method as FindMyWay.HTTPMethod, raw.url ?? '/')
    const store = found?.store as Store | undefined
    const handler = store?.kind ? handlers.get(store.kind) : undefined
    if (!handler || !found || !store) return false
    const request = new FrontRequest(raw, runtime)
    try {
      options.guard(request)
    } catch {
      return false
    }
    if (handler.claims && !handler.claims(request)) return false
    const reply = new FrontReply(request, response, runtime)
    reply.header('x-request-id', request.id)
    if (runtime.logRequests) request.log.info({ req: request }, 'incoming request')
    // `on`: a response closes once, and `once` would wrap the listener anew for every request.
    response.on('close', () => {
      if (reply.hijacked) return
      const seconds = (performance.now() - request.startedAt) / 1000
      runtime.observe(request.method, request.metricsRoute || store.url, reply.statusCode, seconds)
      if (runtime.logRequests) {
        request.log.info({ res: { statusCode: reply.statusCode }, responseTime: seconds * 1000 }, 'request completed')
      }
    })
    runWithRequestId(request.id, () => answer(request, reply, handler, found))
    return true
  }

  return {
    take,
    /** Answers the routes marked `config.frontDoor: name` with `handler`. */
    handle(name: string, handler: FrontHandler): void {
      handlers.set(name, handler)
    },
    /** Adds a response hook for front-door replies (Fastify's onSend hooks do not see them). */
    onSend(hook: FrontSendHook): void {
      runtime.onSend.push(hook)
    },
  }
}

export type FrontDoor = ReturnType<typeof createFrontDoor>
