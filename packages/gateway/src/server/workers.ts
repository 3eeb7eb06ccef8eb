import { type ChildProcess, fork } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { createPrettyLogStream, exitOnStartupError, readConfigSection, serve } from '@atrium/platform'
import { buildGateway } from '../app.ts'
import { CLI_NODE_NUMBER, type GatewayConfig, loadGatewayConfig } from '../config.ts'
import { createLimitGrants, type LimitMessage, type LimitPeer } from '../rate-limit/limit-grants.ts'
import { createLimitLink } from '../rate-limit/node-window.ts'
import type { Invalidation } from './invalidations.ts'
import type { NodeMessage } from './node-messages.ts'

/** The environment variable that tells a forked gateway process its worker index. */
export const WORKER_ENV = 'ATRIUM_GATEWAY_WORKER'
/** How long a worker waits for the others to apply an invalidation before answering anyway. */
const RELAY_TIMEOUT_MS = 2_000
/** First and longest wait before a worker that died is started again; the wait doubles per quick death. */
const RESTART_MIN_MS = 250
const RESTART_MAX_MS = 30_000
/** A worker that ran this long before dying is restarted after the shortest wait again. */
const STABLE_MS = 60_000

/** Messages between the primary and its workers over the IPC channel. */
type WorkerMessage =
  | { type: 'listening'; port: number }
  | { type: 'invalidate'; id: number; invalidation: Invalidation }
  | { type: 'applied'; id: number }
  | { type: 'relayed'; id: number }
  /** A node message (node-messages.ts): from a worker to the primary, then to every other worker with `from`. */
  | { type: 'broadcast'; message: NodeMessage; from?: number }
  /** The node's rate limits, which the primary counts (rate-limit/limit-grants.ts). */
  | { type: 'limit'; message: LimitMessage }

/**
 * How many gateway processes serve this node: the Workers setting, or when it is 0 (the default)
 * one per core, never past the node numbers left below the CLI's.
 */
export function workerCount(config: GatewayConfig, cores = availableParallelism()): number {
  if (config.Workers > 0) return config.Workers
  return Math.max(1, Math.min(cores, CLI_NODE_NUMBER - config.NodeNumber))
}

/**
 * The gateway's process entry: one process serving the port, or with several workers a primary
 * that only supervises them (a worker that crashes cannot take the port or the relay with it).
 */
export function runGateway(): void {
  async function main() {
    const config = loadGatewayConfig(readConfigSection(process.env.ATRIUM_CONFIG, 'gateway'), process.env)
    const stream = config.LogFormat === 'pretty' ? createPrettyLogStream() : undefined
    const index = process.env[WORKER_ENV]
    if (index !== undefined) return runWorker(config, Number(index), stream)
    const count = workerCount(config)
    if (count === 1) {
      const app = await buildGateway(config, { logger: { level: config.LogLevel, ...(stream && { stream }) } })
      await serve(app, { host: config.Host, port: config.Port })
      return
    }
    superviseWorkers(config, count, primaryLog(config.LogLevel, stream))
  }
  main().catch(exitOnStartupError)
}

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 }

/** The primary's log lines, in the workers' (pino's) JSON shape, so one collector or the pretty stream reads both. */
function primaryLog(level: string, stream: { write(chunk: string): void } | undefined) {
  const threshold = LEVELS[level] ?? 30
  const write = (at: number) => (fields: Record<string, unknown>, msg: string) => {
    if (at < threshold) return
    const line = `${JSON.stringify({ level: at, time: Date.now(), pid: process.pid, role: 'primary', ...fields, msg })}\n`
    if (stream) stream.write(line)
    else process.stdout.write(line)
  }
  return { info: write(30), error: write(50) }
}

type PrimaryLog = ReturnType<typeof primaryLog>

/** A forked worker: serves the shared port and relays invalidations through the primary. */
async function runWorker(
  config: GatewayConfig,
  index: number,
  stream: ReturnType<typeof createPrettyLogStream> | undefined,
) {
  // Node messages keep coming while the worker closes (a stream's presence, a limit report), after
  // the channel may be gone: sending on a closed channel would end the worker with an error.
  const send = (message: WorkerMessage) => {
    if (process.connected) process.send?.(message)
  }
  const waiting = new Map<number, () => void>()
  let nextId = 0
  const relay = (invalidation: Invalidation) =>
    new Promise<void>((resolve) => {
      const id = ++nextId
      const timer = setTimeout(() => {
        waiting.delete(id)
        resolve()
      }, RELAY_TIMEOUT_MS)
      timer.unref()
      waiting.set(id, () => {
        clearTimeout(timer)
        waiting.delete(id)
        resolve()
      })
      send({ type: 'invalidate', id, invalidation })
    })
  // Worker 0 alone tells the primary what other gateway nodes counted, so the node counts it once.
  const limits = createLimitLink((message) => send({ type: 'limit', message }), { forwardsForeign: index === 0 })
  const app = await buildGateway(config, {
    logger: { level: config.LogLevel, base: { pid: process.pid, worker: index }, ...(stream && { stream }) },
    worker: { index, relay, broadcast: (message) => send({ type: 'broadcast', message }), limits },
  })
  process.on('message', (message: WorkerMessage) => {
    if (message.type === 'invalidate') {
      app.store.invalidations.apply(message.invalidation)
      send({ type: 'applied', id: message.id })
    } else if (message.type === 'relayed') waiting.get(message.id)?.()
    else if (message.type === 'broadcast') app.nodeMessages.receive({ ...message.message, from: message.from ?? -1 })
    else if (message.type === 'limit') limits.receive(message.message)
  })
  // Without its primary the worker would serve on unsupervised: it drains and stops instead.
  let closing = false
  process.once('disconnect', () => {
    limits.disconnected()
    if (!closing) process.kill(process.pid, 'SIGTERM')
  })
  app.addHook('preClose', async () => {
    closing = true
  })
  // The channel would keep a stopped worker alive; once the gateway has closed it is let go.
  app.addHook('onClose', async () => {
    if (process.connected) process.disconnect()
  })
  await serve(app, { host: config.Host, port: config.Port, reusePort: true })
  const address = app.server.address()
  send({ type: 'listening', port: typeof address === 'object' && address ? address.port : config.Port })
}

interface Pending {
  from: ChildProcess
  /** The id the sending worker gave the invalidation. */
  id: number
  waitingFor: Set<ChildProcess>
  timer: NodeJS.Timeout
}

/**
 * The primary with several workers: starts worker 0 (which migrates the database and resolves
 * Port 0), then the others on its port; relays invalidations and tells the sender once every
 * other worker applied them; restarts a worker that dies, waiting longer after each quick death;
 * on SIGTERM or SIGINT stops them all, each draining its requests, and exits.
 */
function superviseWorkers(config: GatewayConfig, count: number, log: PrimaryLog) {
  const workers: (ChildProcess | undefined)[] = new Array(count).fill(undefined)
  const restarts = new Array<number>(count).fill(0)
  // By the primary's own relay id: the workers number their invalidations independently.
  const pending = new Map<number, Pending>()
  let nextRelayId = 0
  const grants = createLimitGrants(count)
  let port = config.Port
  let started = false
  let stopping = false
  let exitCode = 0

  function finish(relayId: number) {
    const entry = pending.get(relayId)
    if (!entry) return
    clearTimeout(entry.timer)
    pending.delete(relayId)
    if (entry.from.connected) entry.from.send({ type: 'relayed', id: entry.id } satisfies WorkerMessage)
  }

  function applied(relayId: number, by: ChildProcess) {
    const entry = pending.get(relayId)
    if (entry?.waitingFor.delete(by) && entry.waitingFor.size === 0) finish(relayId)
  }

  function relay(from: ChildProcess, id: number, invalidation: Invalidation) {
    const relayId = ++nextRelayId
    const others = workers.filter((worker): worker is ChildProcess => !!worker && worker !== from && worker.connected)
    const timer = setTimeout(() => finish(relayId), RELAY_TIMEOUT_MS)
    pending.set(relayId, { from, id, waitingFor: new Set(others), timer })
    for (const other of others) other.send({ type: 'invalidate', id: relayId, invalidation } satisfies WorkerMessage)
    if (others.length === 0) finish(relayId)
  }

  /** Hands a worker's node message to every other worker, naming the sender. */
  function broadcast(from: number, message: NodeMessage) {
    for (const [index, worker] of workers.entries()) {
      if (index === from || !worker?.connected) continue
      worker.send({ type: 'broadcast', message, from } satisfies WorkerMessage)
    }
  }

  function start(index: number) {
    const child = fork(process.argv[1]!, process.argv.slice(2), {
      env: { ...process.env, [WORKER_ENV]: String(index), Port: String(port) },
      execArgv: process.execArgv,
    })
    workers[index] = child
    const peer: LimitPeer = {
      send(message) {
        if (child.connected) child.send({ type: 'limit', message } satisfies WorkerMessage)
      },
    }
    // A message sent just as the worker's channel closed fails here, not in the primary's flow.
    child.on('error', (error) => log.error({ worker: index, error: error.message }, 'gateway worker channel error'))
    const startedAt = Date.now()
    let listening = false
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'listening') {
        listening = true
        log.info({ worker: index, workerPid: child.pid, port: message.port }, 'gateway worker listening')
        if (!started && index === 0) {
          port = message.port
          for (let other = 1; other < count; other++) start(other)
        }
        if (!started && workers.every((worker) => worker)) started = true
      } else if (message.type === 'invalidate') relay(child, message.id, message.invalidation)
      else if (message.type === 'broadcast') broadcast(index, message.message)
      else if (message.type === 'applied') applied(message.id, child)
      else if (message.type === 'limit') grants.receive(peer, message.message)
    })
    child.on('exit', (code, signal) => {
      workers[index] = undefined
      for (const relayId of [...pending.keys()]) applied(relayId, child)
      grants.gone(peer)
      // Its streams are gone: the others drop the presence it reported.
      broadcast(index, { kind: 'gone' })
      if (stopping) {
        // A worker still starting has no handler yet: SIGTERM ends it at once, which is a clean stop too.
        if (code !== 0 && signal !== 'SIGTERM') exitCode = 1
        if (workers.every((worker) => !worker)) process.exit(exitCode)
        return
      }
      if (!listening && !started) {
        // A worker that cannot start at first (a bad certificate, an unreachable database) will not
        // start later either: the node stops, as a single process would.
        log.error({ worker: index, code, signal }, 'gateway worker failed to start; stopping')
        stop('SIGTERM', 1)
        return
      }
      if (Date.now() - startedAt >= STABLE_MS) restarts[index] = 0
      const delay = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** restarts[index]!)
      restarts[index]! += 1
      log.error({ worker: index, code, signal, restartInMs: delay }, 'gateway worker died; restarting it')
      setTimeout(() => {
        if (!stopping) start(index)
      }, delay).unref()
    })
  }

  function stop(signal: NodeJS.Signals, code = 0) {
    if (stopping) return
    stopping = true
    exitCode = code
    log.info({ signal }, 'stopping: the workers drain their requests')
    for (const worker of workers) worker?.kill('SIGTERM')
    if (workers.every((worker) => !worker)) process.exit(exitCode)
  }

  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))
  log.info({ workers: count }, 'starting gateway workers')
  start(0)
}
