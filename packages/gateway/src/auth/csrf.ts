import { timingSafeEqual } from 'node:crypto'
import { ApiError, type ReplyView, type RequestView, sendError } from '@atrium/platform'
import type { FastifyInstance } from 'fastify'
import type { GatewayRequest } from './caller.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route starts or completes a sign-in: it acts on no session's authority, so the CSRF
     * token is not required, but the site check applies to every caller (against login CSRF),
     * and no foreign origin passes it.
     */
    signIn?: boolean
    /**
     * A CORS layer judges the route's cross-origin calls (the proxy's routes): the site check
     * leaves a registered app origin to it. Set by `leaveAppOriginsToCors`.
     */
    corsLayer?: boolean
  }
}

/** The header a cookie-authenticated client echoes the session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token'

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * Paths of the operator pages (the gateway's /ProxyAdmin/, the chat module's /ChatAdmin/ behind
 * it) whose plain HTML form posts are judged by Origin instead of the token header. Plain
 * characters only: a path with escapes or dot segments keeps the token rule.
 */
const OPERATOR_PAGE = /^\/(?:ProxyAdmin|ChatAdmin)\/[A-Za-z0-9_/-]*$/
const FORM = 'application/x-www-form-urlencoded'

export interface CsrfOptions {
  /** PublicOrigin: the origin of the gateway's own pages. */
  publicOrigin: string
  /**
   * True when a cross-origin call from this origin is one the CORS layer will judge (a registered
   * app origin). Asked only on routes with a CORS layer (`corsLayer`), never on sign-in routes.
   * The session's CSRF token is required either way. Default: none.
   */
  allowedOrigin?: (origin: string, request: GatewayRequest) => boolean
}

function tokenMatches(presented: string, expected: string): boolean {
  const a = Buffer.from(presented)
  const b = Buffer.from(expected)
  return expected.length > 0 && a.length === b.length && timingSafeEqual(a, b)
}

function headerText(request: RequestView, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * Marks every route registered in `scope` (and its children) as judged by a CORS layer, so the
 * CSRF site check lets a registered app origin through to it. Call it first in the scope.
 */
export function leaveAppOriginsToCors(scope: FastifyInstance): void {
  scope.addHook('onRoute', function markCorsLayer(route) {
    route.config = { ...route.config, corsLayer: true }
  })
}

/**
 * Installs the CSRF check as a global hook, after authentication, so it covers every route,
 * including those proxied to modules. A POST/PUT/PATCH/DELETE whose caller was authenticated by
 * the session cookie must carry the session's token in X-CSRF-Token (compared in constant time)
 * and must come from the gateway's own site. Sign-in routes get the site check for every caller.
 * Bearer and API-key callers are exempt: browsers never attach those by themselves. Refusals
 * answer CsrfRejected (403).
 *
 * Operator pages' form posts (/ProxyAdmin/, /ChatAdmin/) carry no token: they pass with Origin
 * equal to PublicOrigin and no Sec-Fetch-Site other than same-origin (docs/security.md).
 *
 * The site is judged by Origin; without it by Sec-Fetch-Site, then by Referer; a request with none
 * of them (a server, not a browser) passes. Only PublicOrigin is the gateway's own. A registered
 * app origin passes only on a route whose CORS layer then judges it (the proxy), never on the
 * gateway's own routes, which have none: a page on an app's origin must not sign a browser in
 * (login CSRF with the attacker's own link or code, issue 14 item 4) nor act with its session.
 */
export function installCsrf(app: FastifyInstance, options: CsrfOptions): CsrfCheck {
  const check = createCsrfCheck(options)
  app.addHook('onRequest', async function checkCsrf(request, reply) {
    return check(request, reply, request.routeOptions.config ?? {})
  })
  return check
}

/** What the CSRF check needs to know of the route a request reaches. */
export interface CsrfRoute {
  signIn?: boolean
  corsLayer?: boolean
}

/** The check installCsrf runs (the front door runs it too): refuses by sending CsrfRejected. */
export type CsrfCheck = (request: GatewayRequest, reply: ReplyView, route: CsrfRoute) => ReplyView | undefined

export function createCsrfCheck({ publicOrigin, allowedOrigin = () => false }: CsrfOptions): CsrfCheck {
  function foreign(request: GatewayRequest, origin: string, route: CsrfRoute, signIn: boolean): boolean {
    if (origin === publicOrigin) return false
    return signIn || route.corsLayer !== true || !allowedOrigin(origin, request)
  }

  function crossSite(request: GatewayRequest, route: CsrfRoute, signIn: boolean): boolean {
    const origin = headerText(request, 'origin')
    if (origin !== undefined) return foreign(request, origin, route, signIn)
    const site = headerText(request, 'sec-fetch-site')
    if (site === 'cross-site' || site === 'same-site') return true
    const referer = headerText(request, 'referer')
    if (referer !== undefined) {
      const from = URL.parse(referer)?.origin
      return from === undefined || foreign(request, from, route, signIn)
    }
    return false
  }

  /**
   * An operator page's form post (no script, so no token header): it passes only from the
   * gateway's own pages, Origin equal to PublicOrigin (required) and Sec-Fetch-Site, when sent,
   * same-origin. SameSite=Lax already keeps the session cookie off cross-site form posts.
   */
  function operatorForm(request: GatewayRequest): boolean | undefined {
    const type = (headerText(request, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    if (type !== FORM || !OPERATOR_PAGE.test(request.url.split('?')[0]!)) return undefined
    const site = headerText(request, 'sec-fetch-site')
    return headerText(request, 'origin') === publicOrigin && (site === undefined || site === 'same-origin')
  }

  return function checkCsrf(request, reply, route) {
    if (!STATE_CHANGING.has(request.method)) return
    const signIn = route.signIn === true
    if (!request.caller.viaCookie && !signIn) return
    if (crossSite(request, route, signIn)) {
      return sendError(reply, new ApiError('CsrfRejected', 'cross-site request refused'))
    }
    if (signIn || !request.caller.viaCookie) return
    const form = operatorForm(request)
    if (form === true) return
    if (form === false) {
      return sendError(reply, new ApiError('CsrfRejected', 'operator forms are accepted from this site only'))
    }
    const presented = request.headers[CSRF_HEADER]
    if (typeof presented !== 'string' || !tokenMatches(presented, request.caller.csrf)) {
      return sendError(reply, new ApiError('CsrfRejected', 'missing or wrong X-CSRF-Token header'))
    }
  }
}
