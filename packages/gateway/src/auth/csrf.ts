import { timingSafeEqual } from 'node:crypto'
import { ApiError, sendError } from '@atrium/platform'
import type { FastifyInstance, FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route starts or completes a sign-in: it acts on no session's authority, so the CSRF
     * token is not required, but the Origin check still applies (against login CSRF).
     */
    signIn?: boolean
  }
}

/** The header a cookie-authenticated client echoes the session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token'

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export interface CsrfOptions {
  /** PublicOrigin: the origin of the gateway's own pages. */
  publicOrigin: string
  /**
   * Hook for the CORS layer: true when a cross-origin call from this origin is one the CORS
   * layer will judge (a registered app origin), so the CSRF check lets it through to that layer
   * instead of refusing it here. The session's CSRF token is required either way. Default: none.
   */
  allowedOrigin?: (origin: string, request: FastifyRequest) => boolean
}

function tokenMatches(presented: string, expected: string): boolean {
  const a = Buffer.from(presented)
  const b = Buffer.from(expected)
  return expected.length > 0 && a.length === b.length && timingSafeEqual(a, b)
}

/**
 * Installs the CSRF check as a global hook, after authentication, so it covers every route,
 * including those proxied to modules. A POST/PUT/PATCH/DELETE whose caller was authenticated by
 * the session cookie must carry the session's token in X-CSRF-Token (compared in constant time)
 * and must not come from another site (Origin, or Sec-Fetch-Site when Origin is absent). Sign-in
 * routes get the site check for every caller. Bearer and API-key callers are exempt: browsers
 * never attach those by themselves. Refusals answer CsrfRejected (403).
 */
export function installCsrf(app: FastifyInstance, { publicOrigin, allowedOrigin = () => false }: CsrfOptions) {
  function crossSite(request: FastifyRequest): boolean {
    const origin = request.headers.origin
    if (typeof origin === 'string') return origin !== publicOrigin && !allowedOrigin(origin, request)
    return request.headers['sec-fetch-site'] === 'cross-site'
  }

  app.addHook('onRequest', async function checkCsrf(request, reply) {
    if (!STATE_CHANGING.has(request.method)) return
    const signIn = request.routeOptions.config?.signIn === true
    if (!request.caller.viaCookie && !signIn) return
    if (crossSite(request)) {
      return sendError(reply, new ApiError('CsrfRejected', 'cross-site request refused'))
    }
    if (signIn || !request.caller.viaCookie) return
    const presented = request.headers[CSRF_HEADER]
    if (typeof presented !== 'string' || !tokenMatches(presented, request.caller.csrf)) {
      return sendError(reply, new ApiError('CsrfRejected', 'missing or wrong X-CSRF-Token header'))
    }
  })
}
