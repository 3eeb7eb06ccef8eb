import type { AddressInfo } from 'node:net'
import { Worker } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import type { BindTarget, SeenBinding, StunOutcome } from './stun-socket.ts'

/** What a STUN worker thread starts with (stun-worker.ts). */
export interface StunWorkerData {
  targets: BindTarget[]
  software: string
  trackedSources: number
  bindingsPerSource: number
  flushMs: number
}

/** Messages from a worker: its sockets are bound, they could not be, or what it answered lately. */
export type FromStunWorker =
  | { kind: 'bound'; addresses: AddressInfo[] }
  | { kind: 'bindFailed'; message: string; code: string | undefined }
  | { kind: 'seen'; counts: Record<StunOutcome, number>; bindings: SeenBinding[]; sendError: string | undefined }

/** The one message to a worker: close the sockets, hand over the last batch, end. */
export type ToStunWorker = { kind: 'close' }

/**
 * The worker's script: beside this module in a checkout; in a built bundle, where import.meta.url
 * is the process's main.mjs, the worker's own bundle beside it (scripts/build.ts).
 */
const WORKER_SCRIPT = new URL(
  import.meta.url.endsWith('.ts') ? './stun-worker.ts' : './stun-worker.mjs',
  import.meta.url,
)

/** How often a worker hands its records to the main thread, at most. */
export const FLUSH_MS = 100
/**
 * Workers that stop are started again at most this many times a minute in all (a crash that comes
 * back at once would otherwise loop); past it STUN stops on the thread that stopped.
 */
const RESTARTS_PER_MINUTE = 5
/** How long a closing worker may take before it is terminated. */
const CLOSE_TIMEOUT_MS = 5000

export interface StunThreadsOptions {
  count: number
  targets: BindTarget[]
  software: string
  trackedSources: number
  bindingsPerSource: number
  log: FastifyBaseLogger
  /** What a worker answered since its last batch. */
  onSeen(counts: Record<StunOutcome, number>, bindings: SeenBinding[]): void
}

interface Running {
  worker: Worker
  exited: Promise<void>
  /** Requests it answered (with XOR-MAPPED-ADDRESS or 420), as of its last batch. */
  answered: number
  /** Whether its sockets are bound (it answers). */
  bound: boolean
}

/**
 * `count` worker threads, each with its own `reusePort` socket on every target. The first binds
 * alone, so that a port of 0 becomes a real port number the others then share. Resolves to the
 * bound addresses once all are bound; rejects with the bind error (EADDRINUSE, EACCES) after
 * stopping any already started. A worker that stops without being asked is logged and started
 * again, at most RESTARTS_PER_MINUTE times a minute in all; past that the gateway logs that STUN
 * stopped on that thread, and with no thread left `workers()` is empty.
 */
export async function startStunThreads(options: StunThreadsOptions) {
  const { count, software, trackedSources, bindingsPerSource, log, onSeen } = options
  const running = new Set<Running>()
  const restarts: number[] = []
  let closing = false
  let sendErrorLogged = false

  function start(targets: BindTarget[]): Promise<{ running: Running; addresses: AddressInfo[] }> {
    const data: StunWorkerData = { targets, software, trackedSources, bindingsPerSource, flushMs: FLUSH_MS }
    const worker = new Worker(WORKER_SCRIPT, { workerData: data })
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    const entry: Running = { worker, exited, answered: 0, bound: false }
    running.add(entry)
    return new Promise((resolve, reject) => {
      worker.on('message', (message: FromStunWorker) => {
        if (message.kind === 'seen') {
          if (message.sendError !== undefined && !sendErrorLogged) {
            sendErrorLogged = true
            log.warn({ err: message.sendError }, 'STUN: a datagram could not be sent (logged once)')
          }
          entry.answered += message.counts.answered + message.counts.unknownAttributes
          onSeen(message.counts, message.bindings)
        } else if (message.kind === 'bound') {
          entry.bound = true
          resolve({ running: entry, addresses: message.addresses })
        } else reject(Object.assign(new Error(message.message), { code: message.code }))
      })
      worker.on('error', (error) => {
        log.error({ err: error, threadId: worker.threadId }, 'STUN worker thread failed')
        reject(error)
      })
      worker.once('exit', (code) => {
        running.delete(entry)
        reject(new Error(`STUN worker thread ended (exit code ${code}) before its sockets were bound`))
        // One that never bound has told why through the rejection; it is not started again.
        if (entry.bound && !closing) restart(entry, code)
      })
    })
  }

  /** A stopped worker's replacement binds where all are bound (the first may have asked for port 0). */
  function restart(entry: Running, code: number) {
    const now = Date.now()
    while (restarts.length > 0 && restarts[0]! < now - 60_000) restarts.shift()
    if (restarts.length >= RESTARTS_PER_MINUTE) {
      log.error(
        { threadId: entry.worker.threadId, code, threads: running.size },
        'STUN worker thread stopped too often; STUN stopped on that thread',
      )
      return
    }
    restarts.push(now)
    log.error({ threadId: entry.worker.threadId, code }, 'STUN worker thread stopped; starting another')
    start(shared).catch((error: unknown) =>
      log.error({ err: error, threads: running.size }, 'STUN worker thread could not be restarted'),
    )
  }

  async function close() {
    closing = true
    await Promise.all(
      [...running].map(async ({ worker, exited }) => {
        worker.postMessage({ kind: 'close' } satisfies ToStunWorker)
        const timer = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS)
        await exited
        clearTimeout(timer)
      }),
    )
  }

  let bound: AddressInfo[] = []
  let shared: BindTarget[] = []
  try {
    const first = await start(options.targets)
    bound = first.addresses
    shared = bound.map(({ address, port }) => ({ address, port }))
    await Promise.all(Array.from({ length: count - 1 }, () => start(shared)))
  } catch (error) {
    await close()
    throw error
  }

  return {
    bound,
    /**
     * The worker threads whose sockets are bound, and what each answered (a test stops one to see
     * it replaced).
     */
    workers: () => [...running].filter((entry) => entry.bound).map(({ worker, answered }) => ({ worker, answered })),
    close,
  }
}

export type StunThreads = Awaited<ReturnType<typeof startStunThreads>>
