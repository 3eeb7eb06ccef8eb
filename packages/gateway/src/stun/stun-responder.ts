import { createSocket, type RemoteInfo, type Socket } from 'node:dgram'
import { type LookupOptions, lookup } from 'node:dns'
import { type AddressInfo, isIP } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import {
  Attr,
  BINDING,
  canonicalAddress,
  decodeStunMessage,
  encodeBindingSuccess,
  encodeStunMessage,
  errorCodeValue,
  messageType,
  type StunAttribute,
  StunClass,
  type TransportAddress,
  unknownAttributesValue,
} from './stun-message.ts'

/**
 * Largest request answered: RFC 8489 §6.2.1 keeps STUN over UDP within 576 bytes (IPv4) or 1280
 * (IPv6); a binding request is about 100 bytes, so anything larger is not one of ours.
 */
export const MAX_REQUEST_BYTES = 1280
/**
 * Socket buffers: a burst of requests (every client of a large call starting at once) waits in the
 * kernel while the event loop is busy; the kernel caps them at net.core.rmem_max / wmem_max.
 */
const RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024
const SEND_BUFFER_BYTES = 1024 * 1024
/** Binding requests remembered per source address for /auth/v1/stun/current. */
export const BINDINGS_PER_SOURCE = 10

/**
 * Comprehension-required attributes a Binding request may carry that this server understands: the
 * credential attributes of §9 and §14 (a basic server uses no credentials, §13, so it reads and
 * ignores them) and ICE's PRIORITY and USE-CANDIDATE (RFC 8445 §7.1.1), which a connectivity check
 * carries and a STUN server has no use for. Any other type below 0x8000 is answered with 420 (§6.3.1);
 * CHANGE-REQUEST among them, which is how an RFC 5780 client learns that NAT behaviour discovery is
 * not offered here.
 */
const UNDERSTOOD = new Set<number>([
  Attr.MappedAddress,
  Attr.Username,
  Attr.MessageIntegrity,
  Attr.ErrorCode,
  Attr.UnknownAttributes,
  Attr.Realm,
  Attr.Nonce,
  Attr.MessageIntegritySha256,
  Attr.PasswordAlgorithm,
  Attr.Userhash,
  Attr.XorMappedAddress,
  Attr.Priority,
  Attr.UseCandidate,
])

const BINDING_ERROR = messageType(BINDING, StunClass.ErrorResponse)

/** What the responder did with one packet; `answered` and `unknownAttributes` were answered. */
export type StunOutcome = 'answered' | 'unknownAttributes' | 'dropped'

/** A binding request the responder answered, as /auth/v1/stun/current shows it. */
export interface SeenBinding extends TransportAddress {
  /** Epoch ms of arrival. */
  at: number
  outcome: 'answered' | 'unknownAttributes'
}

/**
 * The answer to one packet from `source`, or undefined to drop it (§6.3): only a well-formed Binding
 * request is answered, with XOR-MAPPED-ADDRESS, or with 420 and UNKNOWN-ATTRIBUTES when it carries
 * comprehension-required attributes this server does not understand. Every answer ends in a
 * FINGERPRINT; `software`, the SOFTWARE attribute, comes first when given.
 */
export function answerStunPacket(
  packet: Buffer,
  source: TransportAddress,
  software: StunAttribute | undefined,
): { outcome: Exclude<StunOutcome, 'dropped'>; reply: Buffer } | undefined {
  if (packet.length > MAX_REQUEST_BYTES) return undefined
  const request = decodeStunMessage(packet)
  if (!request || request.messageClass !== StunClass.Request || request.method !== BINDING) return undefined
  let unknown: number[] | undefined
  for (const { type } of request.attributes) {
    if (type < 0x8000 && !UNDERSTOOD.has(type)) {
      unknown ??= []
      if (!unknown.includes(type)) unknown.push(type)
    }
  }
  if (unknown) {
    const attributes: StunAttribute[] = software ? [software] : []
    attributes.push(
      { type: Attr.ErrorCode, value: errorCodeValue(420, 'Unknown Attribute') },
      { type: Attr.UnknownAttributes, value: unknownAttributesValue(unknown) },
    )
    return {
      outcome: 'unknownAttributes',
      reply: encodeStunMessage(BINDING_ERROR, request.transactionId, attributes),
    }
  }
  return { outcome: 'answered', reply: encodeBindingSuccess(packet, source, software) }
}

/**
 * The sockets' address lookup: every answer goes to the IP address a request came from, which
 * dns.lookup would hand back only on the next tick; answered at once, a send costs a tick less.
 */
function lookupLiteral(
  address: string,
  options: LookupOptions | number,
  callback: (error: NodeJS.ErrnoException | null, address: string, family: number) => void,
) {
  const literal = isIP(address)
  if (literal !== 0) callback(null, address, literal)
  else {
    const family = typeof options === 'number' ? options : options.family
    lookup(address, { family: family === 'IPv6' || family === 6 ? 6 : 4 }, callback)
  }
}

export interface StunResponderOptions {
  /** SOFTWARE in every answer; empty leaves the attribute out. */
  software: string
  /** Source addresses whose recent requests are remembered; the oldest goes first past it. */
  trackedSources: number
  log: FastifyBaseLogger
  now?: () => number
}

/** Where a socket should bind: an address of the gateway's listener, or the configured one. */
export interface BindTarget {
  address: string
  port: number
}

/**
 * The embedded STUN responder (spec: "The gateway" item 10): UDP sockets that answer Binding
 * requests, a count of what they did, and the last requests per source address, in memory.
 */
export function createStunResponder({ software, trackedSources, log, now = Date.now }: StunResponderOptions) {
  const softwareAttribute = software ? { type: Attr.Software, value: Buffer.from(software, 'utf8') } : undefined
  const sockets: Socket[] = []
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

  function remember(source: TransportAddress, outcome: SeenBinding['outcome']) {
    let list = seen.get(source.address)
    if (!list) {
      // Past the limit the source seen first goes (it comes back with its next request).
      if (seen.size >= trackedSources) seen.delete(seen.keys().next().value as string)
      list = []
      seen.set(source.address, list)
    }
    if (list.length === BINDINGS_PER_SOURCE) list.shift()
    list.push({ family: source.family, address: source.address, port: source.port, at: now(), outcome })
  }

  function onMessage(this: Socket, packet: Buffer, remote: RemoteInfo) {
    const source = canonicalAddress(remote.address, remote.port, remote.family)
    // Port 0 cannot be answered; it is also a classic reflection forgery.
    const answer = remote.port === 0 ? undefined : answerStunPacket(packet, source, softwareAttribute)
    if (!answer) {
      counts.dropped++
      return
    }
    counts[answer.outcome]++
    remember(source, answer.outcome)
    this.send(answer.reply, remote.port, remote.address)
  }

  function onError(error: Error) {
    // A send that fails (a full buffer under a flood, an unreachable peer) is not worth a line each.
    if (sendErrors++ === 0) log.warn({ err: error }, 'STUN: a datagram could not be sent (logged once)')
  }

  async function bindOne({ address, port }: BindTarget): Promise<AddressInfo> {
    const socket = createSocket({
      type: address.includes(':') ? 'udp6' : 'udp4',
      lookup: lookupLiteral,
      recvBufferSize: RECEIVE_BUFFER_BYTES,
      sendBufferSize: SEND_BUFFER_BYTES,
    })
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject)
      socket.bind({ address, port, exclusive: true }, () => {
        socket.off('error', reject)
        resolve()
      })
    }).catch((error: unknown) => {
      socket.close()
      throw error
    })
    socket.on('message', onMessage)
    socket.on('error', onError)
    sockets.push(socket)
    return socket.address()
  }

  return {
    /**
     * Binds one socket per target. Resolves to the bound addresses; on a failure the sockets bound
     * so far are closed and the error (EADDRINUSE, EACCES) is the rejection.
     */
    listen(targets: BindTarget[]): Promise<AddressInfo[]> {
      attempt = Promise.all(targets.map(bindOne)).catch(async (error: unknown) => {
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

    /** The sockets' local addresses now; empty when none is bound. */
    addresses(): AddressInfo[] {
      return sockets.map((socket) => socket.address())
    },

    /** The last answered requests from one IP address (canonical form), newest first. */
    bindingsFrom(address: string): SeenBinding[] {
      return [...(seen.get(address) ?? [])].reverse()
    },

    /** Packets by outcome since start. */
    counts: () => ({ ...counts }),

    /** Closes every socket, after a bind still under way has settled. */
    async close(): Promise<void> {
      await attempt?.catch(() => undefined)
      await closeSockets()
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
