import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { OutboundRefused, type ResolveHost, resolveOutbound } from './outbound-address.ts'

/** Why an outbound request got no answer: a refused address, no answer in time, or no connection. */
export type OutboundFailure = 'refused' | 'timeout' | 'unreachable'

export class OutboundError extends Error {
  override name = 'OutboundError'
  readonly failure: OutboundFailure
  constructor(failure: OutboundFailure, message: string, options?: ErrorOptions) {
    super(message, options)
    this.failure = failure
  }
}

export interface OutboundClientOptions {
  /** Reach loopback, private and link-local addresses too (development and tests). */
  allowPrivateAddresses: boolean
  /** Time one request may take, from resolving the host to the end of the answer. */
  timeoutMs: number
  /** How host names are resolved; the system resolver by default. */
  resolve?: ResolveHost
  /** The setting that allows internal addresses, named when one is refused (e.g. `Webhooks.AllowPrivateAddresses`). */
  allowSetting?: string
}

/** The status of an answer and the start of its body (for the operator's diagnostics). */
export interface OutboundAnswer {
  status: number
  excerpt: string
}

const EXCERPT_BYTES = 300

/** A lookup that answers the address already checked, whatever the host name. */
function pinnedLookup(address: string, family: number): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }])
    else callback(null, address, family)
  }
}

/**
 * The one client for requests to user-chosen URLs (ARCHITECTURE.md, "Security defaults"). It
 * resolves the host and refuses it when any address is loopback, private or link-local, then
 * connects to the address it checked (the Host header and TLS name stay the URL's host). It follows
 * no redirects and reads at most a short excerpt of the answer.
 */
export function createOutboundClient({
  allowPrivateAddresses,
  timeoutMs,
  resolve,
  allowSetting,
}: OutboundClientOptions) {
  // Pooled sockets were opened to checked addresses, so reusing them keeps the guarantee.
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) }

  /** Checks the URL and resolves its host to the one address the request may connect to. */
  async function pin(url: string, stop: AbortSignal, signal: AbortSignal | undefined, timeout: AbortSignal) {
    const target = URL.parse(url)
    if (!target) throw new OutboundError('refused', `not a URL: ${JSON.stringify(url.slice(0, 200))}`)
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw new OutboundError('refused', `${target.protocol} URLs are not supported`)
    }
    try {
      const pinned = await abortable(
        resolveOutbound(target.hostname, { allowPrivate: allowPrivateAddresses, resolve, allowSetting }),
        stop,
      )
      return { target, pinned, secure: target.protocol === 'https:' }
    } catch (error) {
      throw failed(error, signal, timeout)
    }
  }

  return {
    /** POSTs `body` to `url`; answers any status, throws OutboundError when there is no answer. */
    async post(
      url: string,
      headers: Record<string, string>,
      body: Buffer,
      signal?: AbortSignal,
    ): Promise<OutboundAnswer> {
      const timeout = AbortSignal.timeout(timeoutMs)
      const stop = signal ? AbortSignal.any([signal, timeout]) : timeout
      const { target, pinned, secure } = await pin(url, stop, signal, timeout)
      try {
        return await new Promise<OutboundAnswer>((settle, reject) => {
          const request = (secure ? httpsRequest : httpRequest)(
            target,
            {
              method: 'POST',
              headers: { ...headers, 'content-length': String(body.length) },
              agent: secure ? agents.https : agents.http,
              lookup: pinnedLookup(pinned.address, pinned.family),
              signal: stop,
            },
            (response: IncomingMessage) => {
              const chunks: Buffer[] = []
              let size = 0
              response.on('data', (chunk: Buffer) => {
                if (size < EXCERPT_BYTES) chunks.push(chunk)
                size += chunk.length
              })
              response.on('end', () =>
                settle({
                  status: response.statusCode ?? 0,
                  excerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8'),
                }),
              )
              response.on('error', reject)
            },
          )
          request.on('error', reject)
          request.end(body)
        })
      } catch (error) {
        throw failed(error, signal, timeout)
      }
    },

    /**
     * Sends a request (any method, answering any status) whose body (a stream of `length` bytes, or none) is piped as it is read, and
     * resolves with the answer once its headers arrive; the caller reads or discards the body. The
     * timeout covers everything up to the answer's headers, so a large body counts, a slow reader
     * of the answer does not.
     */
    async stream(
      method: string,
      url: string,
      headers: Record<string, string>,
      body?: { stream: Readable | Buffer; length: number },
    ): Promise<IncomingMessage> {
      const stopper = new AbortController()
      const timer = setTimeout(() => stopper.abort(new OutboundError('timeout', 'no answer in time')), timeoutMs)
      const timeout = stopper.signal
      const { target, pinned, secure } = await pin(url, timeout, undefined, timeout).catch((error) => {
        clearTimeout(timer)
        throw error
      })
      try {
        return await new Promise<IncomingMessage>((settle, reject) => {
          const request = (secure ? httpsRequest : httpRequest)(target, {
            method,
            // A bodiless POST or PUT says so, rather than being sent chunked (S3 wants a length).
            headers:
              body || method === 'POST' || method === 'PUT'
                ? { ...headers, 'content-length': String(body?.length ?? 0) }
                : headers,
            agent: secure ? agents.https : agents.http,
            lookup: pinnedLookup(pinned.address, pinned.family),
            signal: timeout,
          })
          request.on('response', (response) => {
            clearTimeout(timer)
            settle(response)
          })
          request.on('error', reject)
          if (!body) request.end()
          else if (Buffer.isBuffer(body.stream)) request.end(body.stream)
          // A failing body destroys the request, which rejects through its 'error' event.
          else pipeline(body.stream, request).catch((error) => request.destroy(error))
        })
      } catch (error) {
        clearTimeout(timer)
        throw failed(error, undefined, timeout)
      }
    },

    /** Closes the pooled connections. */
    close() {
      agents.http.destroy()
      agents.https.destroy()
    },
  }
}

export type OutboundClient = ReturnType<typeof createOutboundClient>

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise((settle, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(settle, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function failed(error: unknown, signal: AbortSignal | undefined, timeout: AbortSignal): unknown {
  if (signal?.aborted) return signal.reason
  if (error instanceof OutboundRefused) return new OutboundError('refused', error.message, { cause: error })
  if (timeout.aborted) return new OutboundError('timeout', 'no answer in time', { cause: error })
  return new OutboundError('unreachable', `no connection: ${(error as Error).message}`, { cause: error })
}
