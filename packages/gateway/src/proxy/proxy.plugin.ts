import type { Readable } from 'node:stream'
import {
  ApiError,
  type FrontRequest,
  hasFlag,
  type ReplyView,
  RouteFlags,
  startBackgroundSweep,
} from '@atrium/platform'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { GatewayRequest } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import { type Cors, corsResponseHeaders } from '../cors/cors.ts'
import { type Admission, whenAdmitted } from '../server/admission.ts'
import { createClientAddress } from './client-address.ts'
import { createForwarder } from './forward.ts'
import { createForwardedHeaders } from './forwarded-headers.ts'
import type { ModuleDirectory } from './module-instances.ts'
import type { ProxyMetrics } from './proxy-metrics.ts'
import { createResponseHeaders } from './response-headers.ts'
import type { Route, Routes } from './routes.repository.ts'
import { createUpstreamTargets, upstreamPath } from './upstream-target.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The Origin of a CORS-approved cross-origin call being proxied; '' otherwise. */
    corsOrigin: string
  }
}

export interface ProxyPluginOptions {
  routes: Routes
  cors: Cors
  /** The modules of the Modules setting and their instances. */
  modules: ModuleDirectory
  settings: GatewayConfig['Proxy']
  serviceSecret: string
  cookieName: string
  /** Country code of a client address ('' when unknown), sent in X-Country. */
  lookupCountry: (ip: string) => string
  /**
   * Answers a request no route matches (the gateway's front page and icon), or returns undefined
   * for NotFound. Asked only after the route map, so a route for `/` keeps `/`.
   */
  unrouted?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined
  /** Counts the modules' failures; nothing when omitted. */
  metrics?: ProxyMetrics
  /** The gateway's request checks, which the front door runs for the requests it proxies. */
  admission: Admission
  /** Counts a request body for the bandwidth limit (Fastify's preParsing hook does it for its own requests). */
  countBody?: (request: GatewayRequest, body: Readable) => Readable
}

/** A request on its way to a module: the CORS-approved Origin it carries, '' for none. */
export type ProxiedRequest = GatewayRequest & { corsOrigin: string }

/** A header value Fastify's content-type parser would refuse (415): such requests are left to Fastify. */
const CONTENT_TYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*(?:;.*)?$/

/**
 * Whether the request carries a body, by Fastify's rule (lib/handle-request.js), so a module
 * gets the same body from both paths: never for GET and HEAD, and for other methods when a
 * Content-Type, a Transfer-Encoding or a non-zero Content-Length says so.
 */
function hasBody(request: FrontRequest): boolean {
  const method = request.method
  if (method === 'GET' || method === 'HEAD') return false
  const { headers } = request
  if (headers['content-type'] !== undefined || headers['transfer-encoding'] !== undefined) return true
  const length = headers['content-length']
  return length !== undefined && length !== '0'
}

/**
 * The reverse proxy: every request no gateway route handles is matched against the route map and
 * streamed to the route's module through a keep-alive pool, with the identity headers set by the
 * gateway and the hop signed. Bodies are never parsed here. CORS is judged before the upstream is
 * contacted, then RequireSession. Upstream failures answer BadGateway, slow upstreams
 * GatewayTimeout; nothing waits longer than the configured timeouts.
 */
export default async function proxyPlugin(app: FastifyInstance, options: ProxyPluginOptions) {
  const { routes, cors, settings } = options
  await Promise.all([routes.refresh(), cors.refresh()])
  startBackgroundSweep(app, settings.RouteReloadMs, 'route map reload', () =>
    Promise.all([routes.refresh(), cors.refresh()]),
  )

  // Bodies stream through untouched: the raw request is the body, whatever its type or size.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
  app.decorateRequest('corsOrigin', '')

  const upstreamTarget = createUpstreamTargets(options.modules)
  const clientAddress = createClientAddress(settings.TrustedProxies)
  const forwardedHeaders = createForwardedHeaders({
    serviceSecret: options.serviceSecret,
    cookieName: options.cookieName,
    project: settings.Project,
    lookupCountry: options.lookupCountry,
  })
  const responseHeaders = createResponseHeaders(options.cookieName)
  const forwarder = createForwarder({
    settings,
    modules: options.modules,
    onUpstreamError: options.metrics?.upstreamError,
    responseHeaders(headers, request) {
      const rewritten = responseHeaders(headers)
      const origin = request.corsOrigin
      if (origin !== '') {
        Object.assign(rewritten, corsResponseHeaders(origin))
        rewritten.vary = rewritten.vary ? `${rewritten.vary}, Origin` : 'Origin'
      }
      return rewritten
    },
  })
  app.addHook('onClose', async () => forwarder.close())

  /** Sends a request the route map matched to its module: CORS, RequireSession, the identity headers, the signed hop. */
  function proxy(request: ProxiedRequest, reply: ReplyView, route: Route): ReplyView {
    // The route map's prefix, not the path: the HTTP metrics stay one series per route.
    request.metricsRoute = route.prefix
    const decision = cors.judge(request, route.flags)
    const caller = request.caller
    if (hasFlag(route.flags, RouteFlags.RequireSession) && caller.keyType === '') {
      throw new ApiError('SessionRequired')
    }

    const target = upstreamTarget(route.upstream)
    const path = upstreamPath(target, request.url)
    let appId = caller.appId
    if (decision.kind === 'allowed') {
      request.corsOrigin = decision.origin
      if (appId === 0) appId = decision.app.id
    }
    const address = clientAddress(request.socket.remoteAddress, request.headers['x-forwarded-for'])
    const headers = forwardedHeaders(request, { caller, address, appId, url: path })

    // Never sent twice: a request may not be idempotent, and a 503 is the module's answer to pass on.
    // Only a request no instance of the module received moves to another (module-instances.ts).
    const upstream = route.upstream.includes('/') ? target.origin : route.upstream
    return forwarder.forward(request, reply, { upstream, origin: target.origin, path, headers })
  }

  // The front door proxies every request the route map matches, except CORS preflights and
  // bodies Fastify would refuse by their type; those, and unrouted paths (the front page, icon
  // and NotFound), reach the route below. Fastify's route serves `inject` too.
  app.frontDoor.handle('proxy', {
    claims(request) {
      if (routes.table.match(request.target.path) === undefined || cors.isPreflight(request)) return false
      const type = request.headers['content-type']
      return type === undefined || CONTENT_TYPE.test(type)
    },
    answer(request, reply) {
      return whenAdmitted(options.admission.admit(request, reply, { corsLayer: true }), (admitted) => {
        // Matched again after the checks: the route map may have been reloaded meanwhile.
        const route = routes.table.match(request.target.path)
        if (!route) throw new ApiError('NotFound', `No route for ${request.method} ${request.url.split('?')[0]}`)
        if (hasBody(request)) admitted.body = options.countBody ? options.countBody(admitted, request.raw) : request.raw
        proxy(Object.assign(admitted, { corsOrigin: '' }), reply, route)
      })
    },
  })

  // Hidden from the OpenAPI document: the modules publish their own.
  app.all(
    '/*',
    { config: { envelope: false, frontDoor: 'proxy' }, schema: { hide: true } },
    async function proxyRoute(request, reply) {
      // The path as the domain guard parsed it: decoded, `;` parameters removed, slashes merged, so
      // `/locked;/x` or `//locked/x` meets the rules of `/locked/` (docs/security.md).
      const route = routes.table.match(request.target.path)
      if (!route) {
        const answered = options.unrouted?.(request, reply)
        if (answered) return answered
        throw new ApiError('NotFound', `No route for ${request.method} ${request.url.split('?')[0]}`)
      }
      if (cors.isPreflight(request)) {
        request.metricsRoute = route.prefix
        return cors.preflight(request, reply, route.flags)
      }
      return proxy(request, reply, route) as FastifyReply
    },
  )
}
