import { Readable } from 'node:stream'
import { ApiError, drainUnreadBody, type ReplyView, sendError } from '@atrium/platform'
import { Agent, type Dispatcher } from 'undici'
import type { GatewayConfig } from '../config.ts'
import type { ModuleDirectory } from './module-instances.ts'
import type { ProxiedRequest } from './proxy.plugin.ts'

type Headers = Record<string, string | string[] | undefined>

/** Errors of undici that mean the module did not answer in time, rather than failed. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

/** How a module failed a proxied request: no answer in time, a failed exchange, a cut body, an invalid status. */
export type UpstreamErrorKind = 'timeout' | 'failed' | 'cut' | 'invalid_status'

export interface UpstreamRequest {
  /** The route's upstream as the metrics name it: a module name, or the origin of a URL upstream. */
  upstream: string
  /** The module's origin (`http://host:port`). */
  origin: string
  /** Path and query exactly as signed. */
  path: string
  headers: Headers
}

export interface ForwarderOptions {
  settings: GatewayConfig['Proxy']
  /** The modules' instances: a request to a module goes to one of them (module-instances.ts). */
  modules: ModuleDirectory
  /** The response headers the client gets from the module's (filtered, CORS added). */
  responseHeaders: (headers: Headers, request: ProxiedRequest) => Headers
  /** Told of every failed exchange whose client was still there (the upstream error metric). */
  onUpstreamError?: (upstream: string, kind: UpstreamErrorKind) => void
}

/**
 * The client's body as undici reads it. An iterator that leaves the client's request alone when
 * undici stops reading: undici destroys a stream body when the module closes early, which would
 * reset the client's connection and lose the module's answer. What the module did not read is
 * drained after the answer (see `drainsBody`), so the connection stays usable.
 */
function clientBody(request: ProxiedRequest): Readable | null {
  const raw = request.body as Readable | undefined
  if (raw === undefined) return null
  // undici takes async iterables as bodies, though its types list only streams.
  return raw.iterator({ destroyOnReturn: false }) as unknown as Readable
}

/** The envelope error a failed upstream exchange answers with: GatewayTimeout for undici's timeouts, else BadGateway. */
export function upstreamError(error: Error): ApiError {
  const code = (error as { code?: string }).code ?? ''
  return TIMEOUT_CODES.has(code)
    ? new ApiError('GatewayTimeout', 'the module did not answer in time')
    : new ApiError('BadGateway', 'the module failed or could not be reached')
}

/**
 * Returns the function that sends a request to its module over a keep-alive pool (undici) and
 * the module's answer back through the reply, with Fastify's response hooks. Bodies stream both
 * ways and are never collected: the answer is sent with the module's first chunk, as that chunk
 * alone when it is the whole body (one write, no stream), otherwise as a stream paused while the
 * client is slower than the module. A request to a module with several instances that could not
 * connect before it was handed to a connection goes to the next instance; once handed over it is
 * never sent again. Failures answer BadGateway, timeouts GatewayTimeout; a failure in the middle of
 * a streamed body cuts the client's response.
 */
export function createForwarder({ settings, modules, responseHeaders, onUpstreamError }: ForwarderOptions) {
  const agent = new Agent({
    connections: settings.Connections,
    pipelining: 1,
    keepAliveTimeout: settings.KeepAliveMs,
    keepAliveMaxTimeout: settings.KeepAliveMs,
    headersTimeout: settings.ResponseTimeoutMs,
    bodyTimeout: settings.BodyTimeoutMs,
    connect: { timeout: settings.ConnectTimeoutMs, rejectUnauthorized: true },
  })

  function forward(request: ProxiedRequest, reply: ReplyView, upstream: UpstreamRequest): ReplyView {
    const method = request.method
    const body = method === 'GET' || method === 'HEAD' ? null : clientBody(request)
    const dispatcher = modules.get(upstream.upstream)?.via(agent) ?? agent
    dispatcher.dispatch(
      {
        origin: upstream.origin,
        path: upstream.path,
        method: method as Dispatcher.HttpMethod,
        headers: upstream.headers,
        body,
      },
      new ResponseHandler(
        request,
        reply,
        responseHeaders,
        body !== null && request.raw.httpVersionMajor !== 1,
        (kind) => onUpstreamError?.(upstream.upstream, kind),
      ),
    )
    return reply
  }

  return { forward, close: () => agent.destroy() }
}

/** One exchange with a module: its answer goes to the reply, streamed. */
class ResponseHandler implements Dispatcher.DispatchHandler {
  private readonly request: ProxiedRequest
  private readonly reply: ReplyView
  private readonly rewrite: ForwarderOptions['responseHeaders']
  private controller: Dispatcher.DispatchController | undefined
  private status = 0
  private headers: Headers = {}
  /** The body length the module announced; -1 when unknown (chunked, server-sent events). */
  private length = -1
  /** Set once the final answer's headers arrived and until the reply was sent. */
  private pending = false
  private stream: Readable | undefined

  /**
   * Whether to read what the module left of an HTTP/2 client's body once the exchange is over
   * (HTTP/1 bodies are drained by the service's onSend hook once the answer is written).
   */
  private readonly drainsBody: boolean
  private readonly failed: (kind: UpstreamErrorKind) => void

  constructor(
    request: ProxiedRequest,
    reply: ReplyView,
    rewrite: ForwarderOptions['responseHeaders'],
    drainsBody: boolean,
    failed: (kind: UpstreamErrorKind) => void,
  ) {
    this.request = request
    this.reply = reply
    this.rewrite = rewrite
    this.drainsBody = drainsBody
    this.failed = failed
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    // 1xx informational answers are not passed on; the final answer follows.
    if (statusCode < 200) return
    // The client went away while the module was answering: nothing to send it.
    if (this.clientGone()) {
      controller.abort(new Error('the client went away'))
      return
    }
    this.status = statusCode
    this.headers = this.rewrite(headers, this.request)
    const length = Number(headers['content-length'])
    this.length = Number.isSafeInteger(length) && length >= 0 ? length : -1
    this.pending = true
    // Nothing follows: answer now rather than wait for the end.
    if (this.request.method === 'HEAD' || this.length === 0 || statusCode === 204 || statusCode === 304) {
      this.sendWhole(Buffer.alloc(0))
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.pending) {
      // The whole body in one chunk (a small answer's usual case): sent as it is, no stream.
      if (chunk.length === this.length) {
        this.sendWhole(chunk)
        return
      }
      this.pending = false
      this.stream = new Readable({
        read: () => controller.resume(),
        destroy: (error, done) => {
          // The client went away (Fastify destroys the payload): stop reading from the module.
          if (!controller.aborted && this.stream?.readableEnded === false)
            controller.abort(error ?? new Error('closed'))
          done(error)
        },
      })
      if (!this.send(this.stream)) return
    }
    if (this.stream && !this.stream.push(chunk)) controller.pause()
  }

  onResponseEnd(): void {
    if (this.pending) this.sendWhole(Buffer.alloc(0))
    else this.stream?.push(null)
    if (this.drainsBody) drainUnreadBody(this.request.raw)
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.drainsBody) drainUnreadBody(this.request.raw)
    if (this.stream) {
      if (!this.clientGone()) this.failed('cut')
      this.stream.destroy(error)
      return
    }
    if (this.clientGone()) return
    this.request.log.warn({ err: error }, 'upstream failed')
    const answer = upstreamError(error)
    this.failed(answer.name === 'GatewayTimeout' ? 'timeout' : 'failed')
    sendError(this.reply, answer)
  }

  /**
   * Whether the client can no longer get an answer. Not `request.raw.destroyed`: Node destroys a
   * request once its body was read to the end, which is how every forwarded body ends.
   */
  private clientGone(): boolean {
    return this.reply.sent || this.reply.raw.destroyed
  }

  private sendWhole(body: Buffer) {
    this.pending = false
    this.send(body)
  }

  /** Sends the module's status, headers and body; false (the exchange aborted) when Fastify cannot send the status. */
  private send(payload: Buffer | Readable): boolean {
    try {
      this.reply.code(this.status)
    } catch {
      this.request.log.warn({ status: this.status }, 'upstream answered an invalid status')
      this.failed('invalid_status')
      sendError(this.reply, new ApiError('BadGateway', 'the module answered an invalid status'))
      this.controller?.abort(new Error('invalid status'))
      return false
    }
    this.reply.headers(this.headers).send(payload)
    return true
  }
}
