import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify'
import { Type } from 'typebox'
import { buildInfo } from './build-info.ts'
import { readConfigSection } from './config.ts'
import { createDomainGuard, type DomainGuardOptions, installDomainGuard } from './domain-guard.ts'
import { handleClientError, installEnvelope, requestIdFor, sendError } from './envelope.ts'
import { ApiError } from './errors.ts'
import { applyConnectionRules, createFrontDoor, type FrontDoor } from './front-door.ts'
import { createPrettyLogStream } from './log-format.ts'
import { installMetrics, type MetricsOptions } from './metrics.ts'
import { installRequestContext } from './request-context.ts'
import { compileSerializer, compileValidator } from './validation.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Routes marked `config.frontDoor` are answered by its handlers ahead of Fastify (front-door.ts). */
    frontDoor: FrontDoor
  }
}

/** A Fastify instance with the TypeBox type provider, as every Atrium service uses. */
export type Service = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

export interface ServiceOptions {
  /** Module name shown by the health endpoint and in logs, e.g. `gateway`, `chat`. */
  name: string
  /** The process's semantic version (its package.json, `processVersion`), shown by the health endpoint and logged at start. */
  version: string
  /** Path of the health endpoint, e.g. `/private/v1/health`. */
  healthPath: string
  /** Hosts this service answers for. */
  domainGuard: DomainGuardOptions
  /** Pino logger options, or false for none (tests). */
  logger: FastifyServerOptions['logger']
  /** Largest accepted request body in bytes. */
  bodyLimit?: number
  /**
   * Certificate and key (PEM) to serve HTTPS, with HTTP/2 and HTTP/1.1 negotiated by ALPN; plain
   * HTTP/1.1 when omitted. Under HTTP/2 `request.raw` is an `Http2ServerRequest`.
   */
  tls?: TlsOptions
  /**
   * Addresses or CIDR ranges of proxies in front of the service: from them, `request.ip` is the
   * rightmost X-Forwarded-For entry that is not itself a trusted proxy; from anyone else it is the peer.
   */
  trustedProxies?: readonly string[]
  /** Where the metrics are read besides the registry (`app.metrics`): a path, the metrics listener. */
  metrics?: MetricsOptions
}

/** PEM certificate chain and private key of an HTTPS service. */
export interface TlsOptions {
  cert: string | Buffer
  key: string | Buffer
}

const SECRET_LOG_PATHS = ['req.headers.cookie', 'req.headers.authorization', 'req.headers["x-api-key"]']
/** Query parameters that are half of a credential (a guest's device GUID, docs/events.md): their values are not logged. */
const SECRET_QUERY = /([?&]device_guid=)[^&#]*/gi

/** A request as its log lines show it: Fastify's fields, with secret query values redacted. */
export function logRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: request.url.replace(SECRET_QUERY, '$1[redacted]'),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

/** The build a process runs, as its health endpoint shows it: `<version> for <domain>`, or `development` unbuilt. */
export function buildLabel(): string {
  return buildInfo ? `${buildInfo.version} for ${buildInfo.domain}` : 'development'
}

/**
 * Creates a service with the platform rules wired in: envelope responses and errors, request ids
 * (carried on to other Atrium processes, request-context.ts), the domain guard, a health endpoint,
 * metrics and refusal of new requests while shutting down. It does not listen; `serve` does.
 */
export function createService(options: ServiceOptions): Service {
  const logger = options.logger === false || options.logger === undefined ? false : options.logger
  const serverOptions: FastifyServerOptions = {
    logger: logger && {
      ...(logger === true ? {} : logger),
      redact: SECRET_LOG_PATHS,
      serializers: { req: logRequest },
    },
    genReqId: requestIdFor,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    clientErrorHandler: handleClientError,
    return503OnClosing: false,
    trustProxy: options.trustedProxies?.length ? [...options.trustedProxies] : false,
    // The router's own refusals (a path that is not valid percent-encoding) in the envelope,
    // without echoing the URL as Fastify's default body does.
    frameworkErrors(_error, request, reply) {
      reply.header('x-request-id', request.id)
      sendError(reply, new ApiError('BadRequest', 'the request path is not valid percent-encoding of UTF-8'))
    },
  }
  // One listener for both protocols: browsers and most clients pick h2 through ALPN, older
  // clients keep HTTP/1.1 on the same port (ARCHITECTURE.md "Processes").
  const tls = options.tls && { http2: true, https: { allowHTTP1: true, cert: options.tls.cert, key: options.tls.key } }
  // The raw request and reply types differ under HTTP/2; the platform only uses what both share.
  const app = (
    Fastify({ ...serverOptions, ...tls } as FastifyServerOptions) as Service
  ).withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(compileValidator)
  app.setSerializerCompiler(compileSerializer)
  // Node answers an HTTP/1.1 request without Host with a bare 400 of its own; the domain guard
  // answers it in the envelope instead.
  ;(app.server as { requireHostHeader?: boolean }).requireHostHeader = false
  // Operations take JSON (and the forms a route adds itself): any other type is refused with
  // UnsupportedMediaType instead of being parsed as text and failing the schema as InvalidRequest.
  app.removeContentTypeParser('text/plain')

  installEnvelope(app)
  installRequestContext(app)
  const observeRequest = installMetrics(app, options.metrics ?? {})
  installDomainGuard(app, options.domainGuard)

  let closing = false
  // The front door answers the routes marked for it (the gateway's proxy and static files) from
  // Node's request event; everything else, and whatever it leaves, reaches Fastify as before.
  const frontDoor = createFrontDoor(app, {
    log: app.log,
    trustedProxies: options.trustedProxies,
    guard: createDomainGuard(options.domainGuard),
    observe: observeRequest,
    closing: () => closing,
  })
  app.decorate('frontDoor', frontDoor)
  const fastifyHandler = app.server.listeners('request')[0] as (
    request: IncomingMessage,
    response: ServerResponse,
  ) => void
  // Node's closeIdleConnections skips a connection that never sent a request (a pooled client's
  // spare, a stalled one): it would hold the close until the headers timeout, 60 s or more.
  // Such connections carry no work, so closing drops them, and any that arrive meanwhile.
  const connections = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    if (closing) return socket.destroy()
    connections.add(socket)
    socket.once('close', () => connections.delete(socket))
  })
  // It also misses an HTTP/1.1 keep-alive connection whose last answer finishes around the start
  // of the close (seen with file downloads): that one held the close for the keep-alive timeout,
  // 72 s. So closing ends every such connection with no request in flight, and each one whose
  // last request in flight ends later. HTTP/2 sessions get a GOAWAY from the server instead.
  const requestsInFlight = new Map<Socket, number>()
  // Shared functions rather than closures with `once`: a socket and a response close once, and
  // this runs for every request (the front door's proxied and static requests among them).
  function requestEnded(this: ServerResponse) {
    const socket = this.req.socket
    const inFlight = requestsInFlight.get(socket)
    if (inFlight === undefined) return
    requestsInFlight.set(socket, inFlight - 1)
    if (closing && inFlight === 1) socket.destroySoon()
  }
  function socketClosed(this: Socket) {
    requestsInFlight.delete(this)
  }
  app.server.removeListener('request', fastifyHandler)
  app.server.on('request', function frontDoorFirst(request: IncomingMessage, response: ServerResponse) {
    if (request.httpVersionMajor === 1) {
      const socket = request.socket
      const inFlight = requestsInFlight.get(socket)
      if (inFlight === undefined) socket.on('close', socketClosed)
      requestsInFlight.set(socket, (inFlight ?? 0) + 1)
      response.on('close', requestEnded)
    }
    if (!frontDoor.take(request, response)) fastifyHandler(request, response)
  })
  app.addHook('preClose', async () => {
    closing = true
    for (const socket of connections) if (socket.bytesRead === 0) socket.destroy()
    for (const [socket, left] of requestsInFlight) if (left === 0) socket.destroy()
  })
  app.addHook('onRequest', async (_request, reply) => {
    if (closing) return sendError(reply, new ApiError('ShuttingDown'))
  })
  // Connection: close while closing; an early answer's unread body drained (Fastify's 413 says
  // `Connection: close`, which this removes).
  app.addHook('onSend', async (request, reply) => {
    applyConnectionRules(request.raw, reply, closing)
  })

  const build = buildLabel()
  app.addHook('onReady', async () => {
    app.log.info(
      { service: options.name, version: options.version, build },
      `${options.name} ${options.version} starting`,
    )
  })
  const startedAt = Date.now()
  app.get(
    options.healthPath,
    {
      schema: {
        response: {
          200: Type.Object({
            status: Type.Literal('ok'),
            service: Type.String(),
            version: Type.String(),
            build: Type.String(),
            uptimeSeconds: Type.Number(),
          }),
        },
      },
    },
    async () => ({
      status: 'ok' as const,
      service: options.name,
      version: options.version,
      build,
      uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
    }),
  )
  return app
}

export interface ServeOptions {
  host: string
  port: number
  /** How long in-flight requests may take to finish after a stop signal before the process exits anyway. */
  drainTimeoutMs?: number
  /** Share the port with other processes listening with it too (SO_REUSEPORT, Linux): the kernel spreads connections. */
  reusePort?: boolean
}

/**
 * Listens and stops gracefully on SIGTERM or SIGINT: the listener closes, idle connections are
 * dropped, in-flight requests finish, then the process exits 0 (1 if draining times out).
 */
export async function serve(app: FastifyInstance, { host, port, drainTimeoutMs = 10_000, reusePort }: ServeOptions) {
  // Fastify hands the options on to net.Server.listen, which knows reusePort (Node 22.12+).
  await app.listen({ host, port, ...(reusePort && { reusePort }) } as { host: string; port: number })
  let stopping = false
  async function stop(signal: NodeJS.Signals) {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'stopping: draining in-flight requests')
    const timer = setTimeout(() => {
      app.log.error('drain timed out; exiting')
      process.exit(1)
    }, drainTimeoutMs)
    timer.unref()
    await app.close()
    clearTimeout(timer)
    app.log.info('stopped')
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
  return app.addresses()
}

/** Ends a process whose start failed: a configuration problem prints its list, anything else its stack. */
export function exitOnStartupError(error: unknown): never {
  const message = error instanceof Error && error.name === 'ConfigError' ? error.message : error
  console.error(message)
  process.exit(1)
}

interface ProcessConfig {
  Host: string
  Port: number
  LogLevel: string
  LogFormat: 'json' | 'pretty'
}

/**
 * The whole of a process's main: loads its config section from the file named by ATRIUM_CONFIG
 * and the environment, builds the service with a logger at the configured level, and serves it
 * until a stop signal. A configuration problem ends the process with the full list of problems.
 */
export function runProcess<C extends ProcessConfig>(
  section: string,
  load: (file: unknown, env: Record<string, string | undefined>) => C,
  build: (config: C, options: { logger: FastifyServerOptions['logger'] }) => Promise<FastifyInstance>,
): void {
  async function main() {
    const config = load(readConfigSection(process.env.ATRIUM_CONFIG, section), process.env)
    const stream = config.LogFormat === 'pretty' ? createPrettyLogStream() : undefined
    const app = await build(config, { logger: { level: config.LogLevel, ...(stream && { stream }) } })
    await serve(app, { host: config.Host, port: config.Port })
  }
  main().catch(exitOnStartupError)
}
