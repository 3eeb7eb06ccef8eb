import { createHmac } from 'node:crypto'
import { isIPv4, isIPv6 } from 'node:net'
import { crc32 } from 'node:zlib'

/** The fixed value in every RFC 8489 message header (§5); a packet without it is not ours. */
export const MAGIC_COOKIE = 0x2112a442
/** Bytes of the message header: type, length, magic cookie, transaction id (§5). */
const HEADER_BYTES = 20
/** The Binding method (§18.2), the only one a basic STUN server supports. */
export const BINDING = 0x001

/** Message classes (§5): the two bits spread over the message type. */
export const StunClass = { Request: 0, Indication: 1, SuccessResponse: 2, ErrorResponse: 3 } as const

/** Attribute types this module reads or writes (RFC 8489 §18.3, RFC 8445 §16.1, RFC 5780 §7). */
export const Attr = {
  MappedAddress: 0x0001,
  ChangeRequest: 0x0003,
  Username: 0x0006,
  MessageIntegrity: 0x0008,
  ErrorCode: 0x0009,
  UnknownAttributes: 0x000a,
  Realm: 0x0014,
  Nonce: 0x0015,
  MessageIntegritySha256: 0x001c,
  PasswordAlgorithm: 0x001d,
  Userhash: 0x001e,
  XorMappedAddress: 0x0020,
  Priority: 0x0024,
  UseCandidate: 0x0025,
  Software: 0x8022,
  AlternateServer: 0x8023,
  Fingerprint: 0x8028,
  IceControlled: 0x8029,
  IceControlling: 0x802a,
} as const

/** XORed into the CRC-32 of a FINGERPRINT ("STUN" in ASCII, §14.7). */
const FINGERPRINT_XOR = 0x5354554e
const FINGERPRINT_BYTES = 8
const INTEGRITY_BYTES = 24

/** One attribute as found in a message: its type and a view of its value (no padding). */
export interface StunAttribute {
  type: number
  value: Buffer
}

/** A message that passed the framing checks of RFC 8489 §6.3. */
export interface StunMessage {
  method: number
  messageClass: number
  /** A view of the 12-byte transaction id. */
  transactionId: Buffer
  /**
   * The attributes in order but FINGERPRINT, up to the first MESSAGE-INTEGRITY(-SHA256) and its allowed followers:
   * others after it are ignored as §14.5 requires, so nothing unauthenticated is read as authenticated.
   */
  attributes: StunAttribute[]
  /** Byte offset of MESSAGE-INTEGRITY, -1 when absent (for checkIntegrity). */
  integrityOffset: number
  /** Whether a FINGERPRINT was present (it was then verified: a wrong one makes decode fail). */
  fingerprinted: boolean
}

/** The message type word of a method and class (§5, figure 3). */
export function messageType(method: number, messageClass: number): number {
  return (
    (method & 0x000f) |
    ((method & 0x0070) << 1) |
    ((method & 0x0f80) << 2) |
    ((messageClass & 1) << 4) |
    ((messageClass & 2) << 7)
  )
}

/**
 * Reads a STUN message, or undefined when the packet is not a well-formed one: the top two bits
 * not zero, a wrong magic cookie, a length that is not the packet's length minus the header or not
 * a multiple of four, an attribute running past the end, a FINGERPRINT that is not last or does not
 * match (§6.3: such packets are silently discarded).
 */
export function decodeStunMessage(packet: Buffer): StunMessage | undefined {
  if (packet.length < HEADER_BYTES || (packet[0]! & 0xc0) !== 0) return undefined
  const length = packet.readUInt16BE(2)
  if (length !== packet.length - HEADER_BYTES || (length & 3) !== 0) return undefined
  if (packet.readUInt32BE(4) !== MAGIC_COOKIE) return undefined
  const type = packet.readUInt16BE(0)
  const attributes: StunAttribute[] = []
  let integrityOffset = -1
  let sealedBy = 0
  let fingerprinted = false
  let offset = HEADER_BYTES
  while (offset < packet.length) {
    if (fingerprinted || offset + 4 > packet.length) return undefined
    const attributeType = packet.readUInt16BE(offset)
    const valueLength = packet.readUInt16BE(offset + 2)
    const end = offset + 4 + valueLength
    if (end > packet.length) return undefined
    if (attributeType === Attr.Fingerprint) {
      if (valueLength !== 4 || !fingerprintMatches(packet, offset)) return undefined
      fingerprinted = true
      offset = end
      continue
    }
    if (sealedBy === Attr.MessageIntegrity && attributeType === Attr.MessageIntegritySha256) {
      sealedBy = attributeType
    } else if (sealedBy !== 0) {
      // §14.5, §14.6: what follows the integrity attribute is not covered by it; ignored.
      offset = end + ((4 - (valueLength & 3)) & 3)
      continue
    } else if (attributeType === Attr.MessageIntegrity || attributeType === Attr.MessageIntegritySha256) {
      sealedBy = attributeType
      if (attributeType === Attr.MessageIntegrity) integrityOffset = offset
    }
    attributes.push({ type: attributeType, value: packet.subarray(offset + 4, end) })
    offset = end + ((4 - (valueLength & 3)) & 3)
  }
  if (offset !== packet.length) return undefined
  return {
    method: (type & 0x000f) | ((type & 0x00e0) >> 1) | ((type & 0x3e00) >> 2),
    messageClass: ((type >> 4) & 1) | ((type >> 7) & 2),
    transactionId: packet.subarray(8, HEADER_BYTES),
    attributes,
    integrityOffset,
    fingerprinted,
  }
}

function fingerprintMatches(packet: Buffer, offset: number): boolean {
  return (crc32(packet.subarray(0, offset)) ^ FINGERPRINT_XOR) >>> 0 === packet.readUInt32BE(offset + 4)
}

/**
 * Whether the MESSAGE-INTEGRITY of a decoded message is the HMAC-SHA1 of everything before it with
 * the header length ending at it (§14.5), keyed by `key`: the password for short-term credentials,
 * MD5(username ":" realm ":" password) for long-term ones (§9.1.1, §9.2.2).
 */
export function checkIntegrity(packet: Buffer, message: StunMessage, key: Buffer | string): boolean {
  const at = message.integrityOffset
  if (at < 0) return false
  const header = Buffer.from(packet.subarray(0, HEADER_BYTES))
  header.writeUInt16BE(at + INTEGRITY_BYTES - HEADER_BYTES, 2)
  const expected = createHmac('sha1', key).update(header).update(packet.subarray(HEADER_BYTES, at)).digest()
  return expected.equals(packet.subarray(at + 4, at + INTEGRITY_BYTES))
}

export interface EncodeOptions {
  /** Appends MESSAGE-INTEGRITY (HMAC-SHA1) with this key before the FINGERPRINT. */
  integrityKey?: Buffer | string
  /** Appends FINGERPRINT last (default true). */
  fingerprint?: boolean
  /** The byte padding fills attribute values to a multiple of four with; receivers ignore it (§14). */
  padding?: number
}

/** Encodes a message: header, the attributes padded to four bytes, then MESSAGE-INTEGRITY and FINGERPRINT as asked. */
export function encodeStunMessage(
  type: number,
  transactionId: Buffer,
  attributes: readonly StunAttribute[],
  { integrityKey, fingerprint = true, padding = 0 }: EncodeOptions = {},
): Buffer {
  if (transactionId.length !== 12) throw new RangeError('a STUN transaction id is 12 bytes')
  let bodyLength = 0
  for (const attribute of attributes) bodyLength += 4 + ((attribute.value.length + 3) & ~3)
  const integrityAt = HEADER_BYTES + bodyLength
  if (integrityKey !== undefined) bodyLength += INTEGRITY_BYTES
  const fingerprintAt = HEADER_BYTES + bodyLength
  if (fingerprint) bodyLength += FINGERPRINT_BYTES
  const packet = Buffer.allocUnsafe(HEADER_BYTES + bodyLength)
  packet.writeUInt16BE(type, 0)
  packet.writeUInt32BE(MAGIC_COOKIE, 4)
  transactionId.copy(packet, 8)
  let offset = HEADER_BYTES
  for (const { type: attributeType, value } of attributes) {
    packet.writeUInt16BE(attributeType, offset)
    packet.writeUInt16BE(value.length, offset + 2)
    value.copy(packet, offset + 4)
    const padded = (value.length + 3) & ~3
    packet.fill(padding, offset + 4 + value.length, offset + 4 + padded)
    offset += 4 + padded
  }
  if (integrityKey !== undefined) {
    // The length covers the message up to and including MESSAGE-INTEGRITY while it is computed (§14.5).
    packet.writeUInt16BE(integrityAt + INTEGRITY_BYTES - HEADER_BYTES, 2)
    packet.writeUInt16BE(Attr.MessageIntegrity, integrityAt)
    packet.writeUInt16BE(20, integrityAt + 2)
    createHmac('sha1', integrityKey)
      .update(packet.subarray(0, integrityAt))
      .digest()
      .copy(packet, integrityAt + 4)
  }
  packet.writeUInt16BE(bodyLength, 2)
  if (fingerprint) {
    packet.writeUInt16BE(Attr.Fingerprint, fingerprintAt)
    packet.writeUInt16BE(4, fingerprintAt + 2)
    packet.writeUInt32BE((crc32(packet.subarray(0, fingerprintAt)) ^ FINGERPRINT_XOR) >>> 0, fingerprintAt + 4)
  }
  return packet
}

/** A transport address as STUN carries it. */
export interface TransportAddress {
  family: 'IPv4' | 'IPv6'
  address: string
  port: number
}

/**
 * A source address as node:dgram reports it, as STUN should carry it: an IPv4-mapped IPv6
 * address (a dual-stack socket's view of an IPv4 peer) is the IPv4 address, and a zone is dropped.
 */
export function canonicalAddress(address: string, port: number, family?: string): TransportAddress {
  // node:dgram tells the family; an IPv4 socket's peers need no look at the text.
  if (family === 'IPv4') return { family, address, port }
  if (address.startsWith('::ffff:') && isIPv4(address.slice(7))) {
    return { family: 'IPv4', address: address.slice(7), port }
  }
  if (isIPv4(address)) return { family: 'IPv4', address, port }
  const zone = address.indexOf('%')
  return { family: 'IPv6', address: zone < 0 ? address : address.slice(0, zone), port }
}

/** The 16 bytes of an IPv6 address (with an optional embedded IPv4 tail), or undefined. */
function ipv6Bytes(address: string): Buffer | undefined {
  if (!isIPv6(address)) return undefined
  let text = address
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  const words: number[] = []
  const lastColon = text.lastIndexOf(':')
  const tail = text.slice(lastColon + 1)
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number]
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, rest] = text.split('::') as [string, string | undefined]
  const headWords = head === '' ? [] : head.split(':')
  const restWords = rest === undefined || rest === '' ? [] : rest.split(':')
  const missing = 8 - headWords.length - restWords.length
  for (const word of headWords) words.push(Number.parseInt(word, 16))
  for (let i = 0; rest !== undefined && i < missing; i++) words.push(0)
  for (const word of restWords) words.push(Number.parseInt(word, 16))
  if (words.length !== 8) return undefined
  const bytes = Buffer.allocUnsafe(16)
  for (const [i, word] of words.entries()) bytes.writeUInt16BE(word, i * 2)
  return bytes
}

/**
 * The value of an XOR-MAPPED-ADDRESS (§14.2): the port XORed with the cookie's top half, an IPv4
 * address with the cookie, an IPv6 address with the cookie and the transaction id.
 */
export function xorMappedAddress(mapped: TransportAddress, transactionId: Buffer): Buffer {
  const value = Buffer.allocUnsafe(mapped.family === 'IPv4' ? 8 : 20)
  writeXorMappedAddress(value, 0, mapped, transactionId, 0)
  return value
}

/** Writes an XOR-MAPPED-ADDRESS value at `at`, XORed with the transaction id at `transactionAt` of `transaction`. */
function writeXorMappedAddress(
  target: Buffer,
  at: number,
  { family, address, port }: TransportAddress,
  transaction: Buffer,
  transactionAt: number,
) {
  target[at] = 0
  target[at + 1] = family === 'IPv4' ? 0x01 : 0x02
  target.writeUInt16BE(port ^ (MAGIC_COOKIE >>> 16), at + 2)
  if (family === 'IPv4') {
    target.writeUInt32BE((ipv4Number(address) ^ MAGIC_COOKIE) >>> 0, at + 4)
    return
  }
  const bytes = ipv6Bytes(address)
  if (!bytes) throw new TypeError(`not an IPv6 address: ${address}`)
  target.writeUInt32BE((bytes.readUInt32BE(0) ^ MAGIC_COOKIE) >>> 0, at + 4)
  for (let i = 4; i < 16; i++) target[at + 4 + i] = bytes[i]! ^ transaction[transactionAt + i - 4]!
}

/**
 * A Binding success response to `request` (whose transaction id it copies): SOFTWARE when given,
 * XOR-MAPPED-ADDRESS of `mapped`, FINGERPRINT. The bytes are those encodeStunMessage makes from the
 * same attributes, written into one buffer because every answer takes this path.
 */
export function encodeBindingSuccess(request: Buffer, mapped: TransportAddress, software?: StunAttribute): Buffer {
  const softwareLength = software ? software.value.length : 0
  const addressAt = HEADER_BYTES + (software ? 4 + ((softwareLength + 3) & ~3) : 0)
  const fingerprintAt = addressAt + (mapped.family === 'IPv4' ? 12 : 24)
  const packet = Buffer.allocUnsafe(fingerprintAt + FINGERPRINT_BYTES)
  packet.writeUInt16BE(messageType(BINDING, StunClass.SuccessResponse), 0)
  packet.writeUInt16BE(packet.length - HEADER_BYTES, 2)
  packet.writeUInt32BE(MAGIC_COOKIE, 4)
  request.copy(packet, 8, 8, HEADER_BYTES)
  if (software) {
    packet.writeUInt16BE(Attr.Software, HEADER_BYTES)
    packet.writeUInt16BE(softwareLength, HEADER_BYTES + 2)
    software.value.copy(packet, HEADER_BYTES + 4)
    packet.fill(0, HEADER_BYTES + 4 + softwareLength, addressAt)
  }
  packet.writeUInt16BE(Attr.XorMappedAddress, addressAt)
  packet.writeUInt16BE(mapped.family === 'IPv4' ? 8 : 20, addressAt + 2)
  writeXorMappedAddress(packet, addressAt + 4, mapped, request, 8)
  packet.writeUInt16BE(Attr.Fingerprint, fingerprintAt)
  packet.writeUInt16BE(4, fingerprintAt + 2)
  packet.writeUInt32BE((crc32(packet.subarray(0, fingerprintAt)) ^ FINGERPRINT_XOR) >>> 0, fingerprintAt + 4)
  return packet
}

/** A dotted IPv4 address as its 32-bit number; read digit by digit, as it is on every answer's path. */
function ipv4Number(address: string): number {
  let total = 0
  let part = 0
  for (let i = 0; i < address.length; i++) {
    const code = address.charCodeAt(i)
    if (code === 46) {
      total = total * 256 + part
      part = 0
    } else part = part * 10 + code - 48
  }
  return total * 256 + part
}

/** Reads an XOR-MAPPED-ADDRESS value back into an address, or undefined when it is malformed. */
export function readXorMappedAddress(value: Buffer, transactionId: Buffer): TransportAddress | undefined {
  if (value.length < 4) return undefined
  const port = value.readUInt16BE(2) ^ (MAGIC_COOKIE >>> 16)
  if (value[1] === 0x01 && value.length === 8) {
    const ip = (value.readUInt32BE(4) ^ MAGIC_COOKIE) >>> 0
    return { family: 'IPv4', address: [ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255].join('.'), port }
  }
  if (value[1] !== 0x02 || value.length !== 20) return undefined
  const bytes = Buffer.allocUnsafe(16)
  bytes.writeUInt32BE((value.readUInt32BE(4) ^ MAGIC_COOKIE) >>> 0, 0)
  for (let i = 4; i < 16; i++) bytes[i] = value[4 + i]! ^ transactionId[i - 4]!
  const words = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16))
  return { family: 'IPv6', address: compressIpv6(words), port }
}

/** The shortest text of an IPv6 address (RFC 5952): the longest run of two or more zero words becomes `::`. */
function compressIpv6(words: string[]): string {
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < 8; ) {
    if (words[i] !== '0') {
      i++
      continue
    }
    let j = i
    while (j < 8 && words[j] === '0') j++
    if (j - i > bestLength) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  if (bestStart < 0) return words.join(':')
  return `${words.slice(0, bestStart).join(':')}::${words.slice(bestStart + bestLength).join(':')}`
}

/** The value of an ERROR-CODE attribute (§14.8): class and number, then the reason phrase. */
export function errorCodeValue(code: number, reason: string): Buffer {
  const phrase = Buffer.from(reason, 'utf8')
  const value = Buffer.alloc(4 + phrase.length)
  value[2] = Math.floor(code / 100)
  value[3] = code % 100
  phrase.copy(value, 4)
  return value
}

/** The value of an UNKNOWN-ATTRIBUTES attribute (§14.13): the 16-bit types, in order. */
export function unknownAttributesValue(types: readonly number[]): Buffer {
  const value = Buffer.allocUnsafe(types.length * 2)
  for (const [i, type] of types.entries()) value.writeUInt16BE(type, i * 2)
  return value
}
