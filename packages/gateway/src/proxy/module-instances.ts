import type { Duplex } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import { Agent, type Dispatcher } from 'undici'

/**
 * Errors that mean the connection to an instance failed: it refused or dropped the connection, or
 * could not be reached in time. Before a request was handed to a connection (see `failover`), the
 * module never saw it, so it may go to another instance.
 */
const CONNECTION_FAILURES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
])

/** The longest an instance that keeps failing is skipped before it is tried again. */
const MAX_BACKOFF_MS = 30_000

/** Whether an error (undici's, or a fetch failure's `cause`) says the connection to an instance failed. */
export function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' && CONNECTION_FAILURES.has(code)
}

/** One instance of a module and what the gateway last saw of it. */
interface Instance {
  origin: string
  /** Connection failures since it last answered. */
  failures: number
  /** Until when it is skipped (ms since the epoch); 0 when it is not. */
  skipUntil: number
}

/** An instance's state as the readiness check and diagnostics show it. */
export interface InstanceState {
  origin: string
  /** Skipped until this time (ms since the epoch) after connection failures; 0 when in rotation. */
  skipUntil: number
}

/** The instances of one module behind this gateway (the Modules setting) and their health. */
export interface ModuleInstances {
  readonly module: string
  /**
   * The module's base URL as requests are built and signed from it: the first instance's. Every
   * instance has the same path, so only the origin differs, and the signature covers the path only.
   */
  readonly url: string
  /** The base URL of every instance. */
  readonly urls: readonly string[]
  /** Every instance's origin with its state, in configured order. */
  states(): InstanceState[]
  /**
   * Origins in the order a request tries them: those in rotation first, starting one further at
   * every call (round robin), then those being skipped, the one whose back-off ends first first.
   */
  order(): string[]
  /** Records a connection failure: the instance is skipped for a back-off that doubles with each one. */
  failed(origin: string): void
  /** Records an answer: the instance is back in rotation. */
  answered(origin: string): void
  /** A dispatcher that sends this module's requests over `agent`, with the failover of `failover` (`agent` itself for one instance). */
  via(agent: Dispatcher): Dispatcher
  /** `fetch` of a URL built from `url`, sent to an instance as `via` chooses it. */
  fetch(url: string, init?: RequestInit): Promise<Response>
  close(): Promise<void>
}

export interface ModuleInstancesOptions {
  /** The first back-off after a connection failure, in ms; it doubles with each further one, up to 30 s. */
  backoffMs: number
  now?: () => number
  /** Told when an instance leaves the rotation and when it is back (several instances only). */
  log?: Pick<FastifyBaseLogger, 'warn' | 'info'>
}

/** The module's base URLs as a list: the Modules setting takes one URL or several. */
export function instanceUrls(setting: string | readonly string[]): string[] {
  return typeof setting === 'string' ? [setting] : [...setting]
}

/** The instances of one module, from its base URLs (at least one; all with one path). */
export function createModuleInstances(
  module: string,
  urls: readonly string[],
  { backoffMs, now = Date.now, log }: ModuleInstancesOptions,
): ModuleInstances {
  const instances: Instance[] = urls.map((url) => ({ origin: new URL(url).origin, failures: 0, skipUntil: 0 }))
  const byOrigin = new Map(instances.map((instance) => [instance.origin, instance]))
  let next = 0
  const dispatchers = new WeakMap<Dispatcher, Dispatcher>()
  let fetchAgent: Agent | undefined

  const self: ModuleInstances = {
    module,
    url: urls[0]!,
    urls,
    states: () => instances.map(({ origin, skipUntil }) => ({ origin, skipUntil })),
    order() {
      if (instances.length === 1) return [instances[0]!.origin]
      const time = now()
      const start = next++ % instances.length
      const rotated = [...instances.slice(start), ...instances.slice(0, start)]
      const inRotation = rotated.filter((instance) => instance.skipUntil <= time)
      const skipped = rotated.filter((instance) => instance.skipUntil > time).sort((a, b) => a.skipUntil - b.skipUntil)
      return [...inRotation, ...skipped].map((instance) => instance.origin)
    },
    failed(origin) {
      const instance = byOrigin.get(origin)
      if (!instance) return
      const time = now()
      const inRotation = instance.skipUntil <= time
      instance.failures++
      const skipMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2 ** Math.min(instance.failures - 1, 20))
      instance.skipUntil = time + skipMs
      // Once per fall out of rotation, not per failed request.
      if (inRotation && instances.length > 1) log?.warn({ module, instance: origin, skipMs }, 'module instance skipped')
    },
    answered(origin) {
      const instance = byOrigin.get(origin)
      if (!instance || instance.failures === 0) return
      instance.failures = 0
      instance.skipUntil = 0
      if (instances.length > 1) log?.info({ module, instance: origin }, 'module instance back in rotation')
    },
    via(agent) {
      // One instance has nothing to choose or fail over to: its requests go as they always did.
      if (instances.length === 1) return agent
      let dispatcher = dispatchers.get(agent)
      if (!dispatcher) {
        dispatcher = agent.compose(failover(self))
        dispatchers.set(agent, dispatcher)
      }
      return dispatcher
    },
    fetch(url, init) {
      if (instances.length === 1) return fetch(url, init)
      fetchAgent ??= new Agent()
      // Node's fetch takes an undici dispatcher; its types name the copy of undici bundled with Node.
      return fetch(url, { ...init, dispatcher: self.via(fetchAgent) } as RequestInit)
    },
    async close() {
      await fetchAgent?.destroy()
    },
  }
  return self
}

/**
 * An undici interceptor that sends each request to the instances in `order()`: a request that
 * failed to connect before it was handed to a connection goes to the next instance (the module
 * never saw it, so this is safe for any method), and the instance is skipped for a while. Once a
 * request was handed to a connection it is never sent again, whatever happens: it may not be
 * idempotent, and its failure reaches the caller as before. An instance whose back-off ended is
 * tried again by the next request that comes to it: if it still refuses, that request moves on.
 */
function failover(instances: ModuleInstances): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) =>
    function dispatchToInstance(options, handler) {
      const origins = instances.order()
      function attempt(index: number): boolean {
        const origin = origins[index]!
        return dispatch({ ...options, origin }, new AttemptHandler(instances, handler, origin, () => moveOn(index)))
      }
      /** Sends the request to the instance after `index`; false when there is none left. */
      function moveOn(index: number): boolean {
        if (index + 1 >= origins.length) return false
        try {
          attempt(index + 1)
        } catch (error) {
          // undici refused the options synchronously: the caller hears of it as of any failure.
          handler.onResponseError?.(undefined as unknown as Dispatcher.DispatchController, error as Error)
        }
        return true
      }
      return attempt(0)
    }
}

/** One try at one instance: passes everything on, but a failure to connect goes to the next instance. */
class AttemptHandler implements Dispatcher.DispatchHandler {
  /** Set once undici handed the request to a connection (it writes it right after). */
  private started = false
  private readonly instances: ModuleInstances
  private readonly inner: Dispatcher.DispatchHandler
  private readonly origin: string
  private readonly moveOn: () => boolean

  constructor(instances: ModuleInstances, inner: Dispatcher.DispatchHandler, origin: string, moveOn: () => boolean) {
    this.instances = instances
    this.inner = inner
    this.origin = origin
    this.moveOn = moveOn
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.started = true
    this.inner.onRequestStart?.(controller, context)
  }

  onRequestUpgrade(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[]>,
    socket: Duplex,
  ): void {
    this.instances.answered(this.origin)
    this.inner.onRequestUpgrade?.(controller, statusCode, headers, socket)
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    this.instances.answered(this.origin)
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage)
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk)
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Record<string, string | string[]>): void {
    this.inner.onResponseEnd?.(controller, trailers)
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    if (isConnectionFailure(error)) {
      this.instances.failed(this.origin)
      // Not handed to a connection: the module never saw the request, so another instance may take it.
      if (!this.started && this.moveOn()) return
    }
    this.inner.onResponseError?.(controller, error)
  }
}

/** Every module of the Modules setting and its instances, shared by all of the gateway's calls to modules. */
export interface ModuleDirectory {
  /** The module's instances; undefined when Modules does not name it. */
  get(module: string): ModuleInstances | undefined
  names(): string[]
  close(): Promise<void>
}

export function createModuleDirectory(
  modules: Readonly<Record<string, string | readonly string[]>>,
  options: ModuleInstancesOptions,
): ModuleDirectory {
  const byName = new Map(
    Object.entries(modules).map(([module, setting]) => [
      module,
      createModuleInstances(module, instanceUrls(setting), options),
    ]),
  )
  return {
    get: (module) => byName.get(module),
    names: () => [...byName.keys()],
    async close() {
      await Promise.all([...byName.values()].map((instances) => instances.close()))
    },
  }
}
