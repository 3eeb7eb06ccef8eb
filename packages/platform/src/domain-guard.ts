import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { sendError } from './envelope.ts'
import { ApiError } from './errors.ts'
import {
  type Authority,
  parseAuthority,
  parseRequestTarget,
  type RequestTarget,
  requestHost,
} from './request-target.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The Host the domain guard accepted, parsed and canonical. */
    authority: Authority
    /** The request target as routes are matched (see `parseRequestTarget`). */
    target: RequestTarget
  }
}

/** Subdomains the frontend probes in parallel for horizontal scaling (spec: "Platform rules"). */
const SCALE_OUT_SUBDOMAINS = ['p1', 'p2', 'p3'] as const

/** Host names every build accepts: loopback forms of localhost. */
const LOCAL_SENTINELS = ['localhost', '127.0.0.1', '::1'] as const

export interface DomainGuardOptions {
  /** The embedded project domain, or null for a development build. */
  domain: string | null
  /** The one platform development host, accepted by every build; empty for none. */
  devHost: string
}

/** Returns a predicate telling whether a parsed host name belongs to this build. */
export function createHostCheck({ domain, devHost }: DomainGuardOptions): (hostname: string) => boolean {
  const allowed = new Set<string>(LOCAL_SENTINELS)
  if (devHost) allowed.add(devHost.toLowerCase())
  if (domain) {
    const base = domain.toLowerCase()
    allowed.add(base)
    for (const sub of SCALE_OUT_SUBDOMAINS) allowed.add(`${sub}.${base}`)
  }
  return function isAllowedHost(hostname) {
    return allowed.has(hostname)
  }
}

/**
 * The front door of every request, before anything reads it: the Host must be present once (on
 * HTTP/2 agree with `:authority`), be a well-formed `host[:port]` (BadRequest otherwise) and name
 * the embedded domain, its p1/p2/p3 subdomains or a development sentinel (MisdirectedHost, 421);
 * the target must pass `parseRequestTarget`. The results are kept on the request as `authority`
 * and `target`, so the router, CORS and the proxy read the same values the guard checked.
 */
export function installDomainGuard(app: FastifyInstance, options: DomainGuardOptions): void {
  const guard = createDomainGuard(options)
  app.decorateRequest('authority', null as unknown as Authority)
  app.decorateRequest('target', null as unknown as RequestTarget)
  app.addHook('onRequest', async (request, reply) => {
    try {
      guard(request)
    } catch (error) {
      if (error instanceof ApiError) return sendError(reply, error)
      throw error
    }
  })
}

/** What the guard reads of a request, and the two fields it sets. */
interface GuardedRequest {
  readonly raw: IncomingMessage
  readonly host: string
  readonly url: string
  authority: Authority
  target: RequestTarget
}

/**
 * The guard's check of one request (installDomainGuard, and the front door's requests): sets
 * `authority` and `target`, or throws the ApiError the request is refused with.
 */
export function createDomainGuard(options: DomainGuardOptions): (request: GuardedRequest) => void {
  const isAllowedHost = createHostCheck(options)
  // Nearly every request names the same host: the last one allowed is kept parsed (frozen, as
  // each request receives the same object).
  let lastHost = ''
  let lastAuthority: Authority | undefined
  return function guard(request) {
    requestHost(request.raw)
    // Fastify's host is the Host (or :authority), or X-Forwarded-Host from a trusted proxy.
    const host = request.host
    let authority = host === lastHost ? lastAuthority : undefined
    if (authority === undefined) {
      authority = parseAuthority(host)
      if (authority === undefined) throw new ApiError('BadRequest', 'the Host header is not a valid host[:port]')
      if (!isAllowedHost(authority.hostname)) {
        throw new ApiError('MisdirectedHost', `Host ${authority.host} is not served here`)
      }
      lastHost = host
      lastAuthority = Object.freeze(authority)
    }
    request.authority = authority
    request.target = parseRequestTarget(request.url)
  }
}
