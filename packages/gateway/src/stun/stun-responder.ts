import type { Socket } from 'node:dgram'
import type { AddressInfo } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import type { TransportAddress } from './stun-message.ts'
import { type BindTarget, bindStunSocket, type SeenBinding, type StunOutcome, stunAnswerer } from './stun-socket.ts'
import { type StunThreads, startStunThreads } from './stun-threads.ts'

/** Binding requests remembered per source address for /auth/v1/stun/current. */
export const BINDINGS_PER_SOURCE = 10

export interface StunResponderOptions {
  /** SOFTWARE in every answer; empty leaves the attribute out. */
  software: string
  /** Source addresses whose recent requests are remembered; the oldest goes first past it. */
  trackedSources: number
  /** 0: the sockets answer on the main thread; n: n worker threads, each with its own sockets. */
  threads?: number
  log: FastifyBaseLogger
  now?: () => number
}

/**
 * The embedded STUN responder (spec: "The gateway" item 10): UDP sockets that answer Binding
 * requests, a count of what they did, and the last requests per source address, in memory. With
 * `threads` above 0 the sockets live in worker threads (stun-threads.ts) and their records arrive
 * here in batches; the table and its bound are the same.
 */
export function createStunResponder({
  software,
  trackedSources,
  threads = 0,
  log,
  now = Date.now,
}: StunResponderOptions) {
  const sockets: Socket[] = []
  let workers: StunThreads | undefined
  const seen = new Map<string, SeenBinding[]>()
  const counts: Record<StunOutcome, number> = { answered: 0, unknownAttributes: 0, dropped: 0 }
  let sendErrors = 0
  let attempt: Promise<AddressInfo[]> | undefined
  let settle: { resolve(bound: AddressInfo[]): void; reject(error: unknown): void } | undefined
  const settled = new Promise<AddressInfo[]>((resolve, reject) => {
    settle = { resolve, reject }
  })
  // A failed bind is logged by whoever called listen; nobody need wait on this one.
  settled.catch(() => undefined)

  function remember(binding: SeenBinding) {
    let list = seen.get(binding.address)
    if (!list) {
      // Past the limit the source seen first goes (it comes back with its next request).
      if (seen.size >= trackedSources) seen.delete(seen.keys().next().value as string)
      list = []
      seen.set(binding.address, list)
    }
    if (list.length === BINDINGS_PER_SOURCE) list.shift()
    list.push(binding)
  }

  const onMessage = stunAnswerer(software, (outcome: StunOutcome, source?: TransportAddress) => {
    counts[outcome]++
    if (source && outcome !== 'dropped') {
      remember({ family: source.family, address: source.address, port: source.port, at: now(), outcome })
    }
  })

  function onError(error: Error) {
    // A send that fails (a full buffer under a flood, an unreachable peer) is not worth a line each.
    if (sendErrors++ === 0) log.warn({ err: error }, 'STUN: a datagram could not be sent (logged once)')
  }

  async function bindOne(target: BindTarget): Promise<AddressInfo> {
    const socket = await bindStunSocket(target, false)
    socket.on('message', onMessage)
    socket.on('error', onError)
    sockets.push(socket)
    return socket.address()
  }

  async function bindThreads(targets: BindTarget[]): Promise<AddressInfo[]> {
    if (targets.length === 0) return []
    workers = await startStunThreads({
      count: threads,
      targets,
      software,
      trackedSources,
      bindingsPerSource: BINDINGS_PER_SOURCE,
      log,
      onSeen(batch, bindings) {
        counts.answered += batch.answered
        counts.unknownAttributes += batch.unknownAttributes
        counts.dropped += batch.dropped
        for (const binding of bindings) remember(binding)
      },
    })
    return workers.bound
  }

  return {
    /**
     * Binds one socket per target (per thread with `threads`). Resolves to the bound addresses; on
     * a failure the sockets bound so far are closed and the error (EADDRINUSE, EACCES) is the
     * rejection.
     */
    listen(targets: BindTarget[]): Promise<AddressInfo[]> {
      attempt =
        threads > 0
          ? bindThreads(targets)
          : Promise.all(targets.map(bindOne)).catch(async (error: unknown) => {
              await closeSockets()
              throw error
            })
      attempt.then(settle?.resolve, settle?.reject)
      return attempt
    },

    /**
     * The bound addresses once the first listen settled (after the gateway's listener is up, or at
     * once with none when STUN is off); rejects when binding failed.
     */
    listening: () => settled,

    /** The sockets' local addresses now; empty when none is bound (or every thread stopped). */
    addresses(): AddressInfo[] {
      if (workers) return workers.workers().length > 0 ? [...workers.bound] : []
      return sockets.map((socket) => socket.address())
    },

    /**
     * The worker threads answering now, each with the requests it answered; empty when the sockets
     * are on the main thread.
     */
    threads: () => workers?.workers() ?? [],

    /** The last answered requests from one IP address (canonical form), newest first. */
    bindingsFrom(address: string): SeenBinding[] {
      return [...(seen.get(address) ?? [])].reverse()
    },

    /** Packets by outcome since start (with threads, as of each thread's last batch). */
    counts: () => ({ ...counts }),

    /** Closes every socket, after a bind still under way has settled; threads end with theirs. */
    async close(): Promise<void> {
      await attempt?.catch(() => undefined)
      await Promise.all([closeSockets(), workers?.close()])
    },
  }

  async function closeSockets() {
    const closing = sockets.splice(0).map((socket) => new Promise<void>((resolve) => socket.close(() => resolve())))
    await Promise.all(closing)
  }
}

export type StunResponder = ReturnType<typeof createStunResponder>

/**
 * Where the sockets bind beside an HTTP(S) listener with these addresses (spec: "Limits", STUN on
 * UDP on the same port as HTTPS): the configured host, or each listener address; the configured
 * port, or the listener's port number.
 */
export function stunBindTargets(
  listener: readonly (AddressInfo | string)[],
  { Host, Port }: { Host: string; Port: number },
): BindTarget[] {
  // A string is a Unix socket path: no port number to share.
  const tcp = listener.filter((address) => typeof address !== 'string')
  if (Host) return tcp.length > 0 || Port ? [{ address: Host, port: Port || (tcp[0]?.port ?? 0) }] : []
  return tcp.map(({ address, port }) => ({ address, port: Port || port }))
}
