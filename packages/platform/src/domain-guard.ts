import type { FastifyInstance } from 'fastify'
import { sendError } from './envelope.ts'
import { ApiError } from './errors.ts'

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

/** The hostname of a Host header value, lower-cased, without port or IPv6 brackets. */
export function hostnameOf(host: string | undefined): string {
  if (!host) return ''
  const lower = host.trim().toLowerCase()
  if (lower.startsWith('[')) return lower.slice(1, lower.indexOf(']'))
  const colon = lower.indexOf(':')
  const name = colon === -1 ? lower : lower.slice(0, colon)
  return name.endsWith('.') ? name.slice(0, -1) : name
}

/** Returns a predicate telling whether a Host header belongs to this build. */
export function createHostCheck({ domain, devHost }: DomainGuardOptions): (host: string | undefined) => boolean {
  const allowed = new Set<string>(LOCAL_SENTINELS)
  if (devHost) allowed.add(devHost.toLowerCase())
  if (domain) {
    const base = domain.toLowerCase()
    allowed.add(base)
    for (const sub of SCALE_OUT_SUBDOMAINS) allowed.add(`${sub}.${base}`)
  }
  return function isAllowedHost(host) {
    return allowed.has(hostnameOf(host))
  }
}

/**
 * Refuses every request whose Host is not the embedded domain, its p1/p2/p3 subdomains or a
 * development sentinel, with MisdirectedHost (421) in the envelope.
 */
export function installDomainGuard(app: FastifyInstance, options: DomainGuardOptions): void {
  const isAllowedHost = createHostCheck(options)
  app.addHook('onRequest', async (request, reply) => {
    if (isAllowedHost(request.host)) return
    return sendError(reply, new ApiError('MisdirectedHost', `Host ${request.host || '(none)'} is not served here`))
  })
}
