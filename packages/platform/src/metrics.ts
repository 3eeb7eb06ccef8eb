import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { collectDefaultMetrics, Registry } from 'prom-client'
import { Type } from 'typebox'
import { asMetric, RequestHistogram } from './request-histogram.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's metrics (docs/operations.md, "Metrics"); capabilities register theirs in `metrics.registry`. */
    metrics: ServiceMetrics
  }
  interface FastifyRequest {
    /**
     * The route label of the request in the HTTP metrics, when the route pattern says too little:
     * the proxy's catch-all sets the route map prefix it matched. Empty: the route pattern.
     */
    metricsRoute: string
  }
}

/** A process's metrics registry and its own listener. */
export interface ServiceMetrics {
  /** This service's metrics; the exposition adds Node's process metrics, shared by every service of the process. */
  readonly registry: Registry
  /** Where the metrics listener listens, once the service is ready; undefined while Metrics.Listen is off. */
  listenerAddress(): AddressInfo | undefined
}

/** The settings of the metrics listener, as every process declares them (`Metrics.*`). */
export interface MetricsListenerSettings {
  Listen: boolean
  Host: string
  Port: number
}

/** The `Metrics` settings of a process whose metrics listener defaults to `port`. */
export function metricsSettings(port: number) {
  return Type.Object(
    {
      Listen: Type.Boolean({
        default: false,
        description:
          'Serve `GET /metrics` (Prometheus text format) on a listener of its own at Metrics.Host:Metrics.Port, without credentials.',
      }),
      Host: Type.String({
        default: '127.0.0.1',
        minLength: 1,
        description:
          'Address of the metrics listener. Loopback by default: only this machine (a Prometheus agent on it) can read it.',
      }),
      Port: Type.Integer({
        default: port,
        minimum: 0,
        maximum: 65535,
        description: 'Port of the metrics listener (0 picks a free port).',
      }),
    },
    { default: {}, additionalProperties: false },
  )
}

export interface MetricsOptions {
  /** A path on the service's own listener that answers the metrics too, e.g. `/private/v1/metrics`. */
  path?: string
  /** Refuses (throws) a caller who may not read `path`: the gateway's admin scope. */
  authorize?: (request: FastifyRequest) => void
  /** The separate listener for Prometheus; none when omitted or not `Listen`. */
  listener?: MetricsListenerSettings
}

/**
 * Node's process metrics (CPU, memory, event loop, garbage collection), collected once per process
 * however many services it runs (tests run dozens): each collector watches the event loop and the
 * garbage collector for as long as the process lives, and the figures are the process's anyway.
 */
let processRegistry: Registry | undefined

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/** The exposition of a service's registry with the process metrics, in the Prometheus text format. */
function exposition(registry: Registry): Promise<string> {
  return Registry.merge([registry, processMetrics()]).metrics()
}

/** Upper bounds of the request duration buckets, in seconds: from a cached answer to a slow upload. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/**
 * Gives a service its metrics registry (with Node's process metrics) and measures every answered
 * request in `atrium_http_request_duration_seconds` by method, route pattern and status; its
 * `_count` is the request rate. Streams handed over to raw responses (SSE) are counted by their
 * own metrics. The registry is read at `options.path` behind `options.authorize` and on the
 * separate listener.
 */
export function installMetrics(app: FastifyInstance, options: MetricsOptions): RequestObserver {
  const registry = new Registry()
  processMetrics()
  const requests = new RequestHistogram(
    'atrium_http_request_duration_seconds',
    'Time from a request to its answer, by method, route pattern and status; _count counts requests.',
    DURATION_BUCKETS,
  )
  registry.registerMetric(asMetric(requests))
  app.decorateRequest('metricsRoute', '')
  app.addHook('onResponse', (request, reply, done) => {
    // Requests no route matched are one label, whatever their path: paths are unbounded.
    const route = request.metricsRoute || request.routeOptions.url || 'unmatched'
    requests.observe(request.method, route, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })

  let listener: Server | undefined
  app.decorate('metrics', {
    registry,
    listenerAddress: () => (listener?.listening ? (listener.address() as AddressInfo) : undefined),
  } satisfies ServiceMetrics)

  if (options.path) {
    const authorize = options.authorize
    app.get(
      options.path,
      {
        config: { envelope: false },
        schema: { hide: true },
        ...(authorize && { preHandler: async (request: FastifyRequest) => authorize(request) }),
      },
      async (_request, reply) => reply.type(registry.contentType).send(await exposition(registry)),
    )
  }

  const settings = options.listener
  if (settings?.Listen) {
    app.addHook('onReady', async () => {
      listener = createMetricsListener(registry)
      await new Promise<void>((resolve, reject) => {
        listener!.once('error', reject)
        listener!.listen(settings.Port, settings.Host, () => {
          listener!.off('error', reject)
          resolve()
        })
      })
      app.log.info({ address: listener.address() }, 'metrics listener ready')
    })
    app.addHook('onClose', async () => {
      if (!listener?.listening) return
      listener.closeAllConnections()
      await new Promise((resolve) => listener!.close(resolve))
    })
  }
  return (method, route, status, seconds) => requests.observe(method, route, status, seconds)
}

/** Counts one answered request in the request histogram (the front door's requests, which pass no Fastify hook). */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void

/** A bare HTTP server answering `GET /metrics` and nothing else: it is for Prometheus, not for people. */
function createMetricsListener(registry: Registry): Server {
  return createServer((request, response) => {
    const path = request.url?.split('?')[0]
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n')
      return
    }
    exposition(registry).then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType })
        response.end(request.method === 'HEAD' ? undefined : text)
      },
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics failed\n'),
    )
  })
}
