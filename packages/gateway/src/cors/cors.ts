import { ApiError, AppFlag, hasFlag, type RequestView, RouteFlags } from '@atrium/platform'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type App, type Apps, appOrigins } from '../apps/apps.repository.ts'

/** Methods a CORS-approved origin may use. */
const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']
/** Request headers a CORS-approved origin may send (besides the CORS-safelisted ones browsers never ask about). */
const ALLOWED_HEADERS = new Set([
  'accept',
  'accept-language',
  'authorization',
  'content-language',
  'content-type',
  'if-match',
  'if-none-match',
  'x-csrf-token',
  'x-device-guid',
  'x-invite-code',
  'x-request-id',
])
/** How long a browser may cache a preflight answer, in seconds. */
const MAX_AGE_SECONDS = '600'
const ALLOW_METHODS = ALLOWED_METHODS.join(', ')
const METHODS = new Set(ALLOWED_METHODS)

export interface CorsOptions {
  apps: Apps
  /** PublicOrigin: requests from it are same-origin and never involve CORS. */
  publicOrigin: string
}

/** The outcome of judging a request's Origin against an app and a route. */
export type CorsDecision =
  /** Same-origin or no Origin: CORS does not apply. */
  | { kind: 'none' }
  /** Cross-origin and allowed for this app. */
  | { kind: 'allowed'; origin: string; app: App }

/**
 * CORS per app and per route (spec: "Authentication" 5): a cross-origin call passes only when the
 * app whose `origins` list holds the Origin has AppFlag.AppAuthAndCORS and the matched route has
 * RouteFlags.AppAuthAndCORS. Apps are read into an origin map on `refresh` (called on the route
 * reload interval and at start), so judging a request never queries the database.
 */
export function createCors({ apps, publicOrigin }: CorsOptions) {
  let byOrigin = new Map<string, App>()

  async function refresh(): Promise<void> {
    const next = new Map<string, App>()
    // Ordered by id, so the oldest app holding an origin wins, as apps.byOrigin does.
    for (const app of await apps.list()) {
      for (const origin of appOrigins(app)) if (!next.has(origin)) next.set(origin, app)
    }
    byOrigin = next
  }

  /** The decision for a request to a route; throws CorsRejected for a refused cross-origin call. */
  function judge(request: RequestView, routeFlags: number): CorsDecision {
    const origin = request.headers.origin
    if (origin === undefined || origin === publicOrigin) return { kind: 'none' }
    const app = byOrigin.get(origin)
    if (!app) throw new ApiError('CorsRejected', `origin ${origin} is not registered by any app`)
    if (!hasFlag(app.flags, AppFlag.AppAuthAndCORS)) {
      throw new ApiError('CorsRejected', 'the app of this origin does not have the AppAuthAndCORS flag')
    }
    if (!hasFlag(routeFlags, RouteFlags.AppAuthAndCORS)) {
      throw new ApiError('CorsRejected', 'this route does not accept cross-origin calls')
    }
    return { kind: 'allowed', origin, app }
  }

  return {
    refresh,
    judge,

    /** True for an origin some app registered: the CSRF hook leaves such calls to this layer. */
    isAppOrigin(origin: string): boolean {
      return byOrigin.has(origin)
    },

    /** True when the request is a CORS preflight (OPTIONS with Origin and Access-Control-Request-Method). */
    isPreflight(request: RequestView): boolean {
      return (
        request.method === 'OPTIONS' &&
        request.headers.origin !== undefined &&
        request.headers['access-control-request-method'] !== undefined
      )
    },

    /** Answers a preflight for a route: 204 with the CORS headers, or throws CorsRejected. */
    preflight(request: FastifyRequest, reply: FastifyReply, routeFlags: number): FastifyReply {
      const decision = judge(request, routeFlags)
      if (decision.kind === 'none') throw new ApiError('CorsRejected', 'a preflight needs a foreign Origin')
      const method = String(request.headers['access-control-request-method']).toUpperCase()
      if (!METHODS.has(method)) throw new ApiError('CorsRejected', `method ${method} is not allowed cross-origin`)
      const requested = String(request.headers['access-control-request-headers'] ?? '')
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean)
      const refused = requested.filter((name) => !ALLOWED_HEADERS.has(name))
      if (refused.length > 0) {
        throw new ApiError('CorsRejected', `headers not allowed cross-origin: ${refused.join(', ')}`)
      }
      reply.code(204).headers({
        'access-control-allow-origin': decision.origin,
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-max-age': MAX_AGE_SECONDS,
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      })
      if (requested.length > 0) reply.header('access-control-allow-headers', requested.join(', '))
      return reply.send()
    },
  }
}

/** Response headers of an allowed cross-origin call (never `*`: credentials are allowed). */
export function corsResponseHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-expose-headers': 'X-Request-Id',
  }
}

export type Cors = ReturnType<typeof createCors>
