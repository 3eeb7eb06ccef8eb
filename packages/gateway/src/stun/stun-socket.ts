import { createSocket, type RemoteInfo, type Socket } from 'node:dgram'
import { type LookupOptions, lookup } from 'node:dns'
import { isIP } from 'node:net'
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

/** Where a socket should bind: an address of the gateway's listener, or the configured one. */
export interface BindTarget {
  address: string
  port: number
}

/**
 * A UDP socket for the responder, bound to `target`. `reusePort` lets the sockets of several
 * threads share one address and port (Linux spreads datagrams over them by source); without it the
 * bind is exclusive. Rejects with the bind's error (EADDRINUSE, EACCES), the socket closed.
 */
export async function bindStunSocket({ address, port }: BindTarget, reusePort: boolean): Promise<Socket> {
  const socket = createSocket({
    type: address.includes(':') ? 'udp6' : 'udp4',
    lookup: lookupLiteral,
    recvBufferSize: RECEIVE_BUFFER_BYTES,
    sendBufferSize: SEND_BUFFER_BYTES,
    reusePort,
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
  return socket
}

/**
 * A socket's `message` listener: answers what deserves an answer and tells `seen` what it did
 * (`source` is undefined for a dropped packet).
 */
export function stunAnswerer(
  software: string,
  seen: (outcome: StunOutcome, source?: TransportAddress) => void,
): (this: Socket, packet: Buffer, remote: RemoteInfo) => void {
  const softwareAttribute = software ? { type: Attr.Software, value: Buffer.from(software, 'utf8') } : undefined
  return function onStunMessage(this: Socket, packet: Buffer, remote: RemoteInfo) {
    const source = canonicalAddress(remote.address, remote.port, remote.family)
    // Port 0 cannot be answered; it is also a classic reflection forgery.
    const answer = remote.port === 0 ? undefined : answerStunPacket(packet, source, softwareAttribute)
    if (!answer) {
      seen('dropped')
      return
    }
    seen(answer.outcome, source)
    this.send(answer.reply, remote.port, remote.address)
  }
}
