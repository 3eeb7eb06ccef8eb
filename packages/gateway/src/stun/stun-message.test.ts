import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import test from 'node:test'
import {
  Attr,
  BINDING,
  canonicalAddress,
  checkIntegrity,
  decodeStunMessage,
  encodeStunMessage,
  messageType,
  readXorMappedAddress,
  StunClass,
  xorMappedAddress,
} from './stun-message.ts'
import { answerStunPacket } from './stun-socket.ts'

/** Hex as RFC 5769 prints it (spaces, line breaks) to bytes. */
const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')

// RFC 5769 (Test Vectors for STUN), sections 2.1–2.4, byte for byte. Sections 2.1–2.3 pad with
// spaces (0x20), section 2.4 with zeros; receivers ignore padding either way.
const SAMPLE_REQUEST = hex(`
  00 01 00 58 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
  80 22 00 10 53 54 55 4e 20 74 65 73 74 20 63 6c 69 65 6e 74
  00 24 00 04 6e 00 01 ff
  80 29 00 08 93 2f f9 b1 51 26 3b 36
  00 06 00 09 65 76 74 6a 3a 68 36 76 59 20 20 20
  00 08 00 14 9a ea a7 0c bf d8 cb 56 78 1e f2 b5 b2 d3 f2 49 c1 b5 71 a2
  80 28 00 04 e5 7a 3b cf`)
const SAMPLE_IPV4_RESPONSE = hex(`
  01 01 00 3c 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
  80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
  00 20 00 08 00 01 a1 47 e1 12 a6 43
  00 08 00 14 2b 91 f5 99 fd 9e 90 c3 8c 74 89 f9 2a f9 ba 53 f0 6b e7 d7
  80 28 00 04 c0 7d 4c 96`)
const SAMPLE_IPV6_RESPONSE = hex(`
  01 01 00 48 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
  80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
  00 20 00 14 00 02 a1 47 01 13 a9 fa a5 d3 f1 79 bc 25 f4 b5 be d2 b9 d9
  00 08 00 14 a3 82 95 4e 4b e6 7b f1 17 84 c9 7c 82 92 c2 75 bf e3 ed 41
  80 28 00 04 c8 fb 0b 4c`)
const SAMPLE_LONG_TERM_REQUEST = hex(`
  00 01 00 60 21 12 a4 42 78 ad 34 33 c6 ad 72 c0 29 da 41 2e
  00 06 00 12 e3 83 9e e3 83 88 e3 83 aa e3 83 83 e3 82 af e3 82 b9 00 00
  00 15 00 1c 66 2f 2f 34 39 39 6b 39 35 34 64 36 4f 4c 33 34 6f 4c 39 46 53 54 76 79 36 34 73 41
  00 14 00 0b 65 78 61 6d 70 6c 65 2e 6f 72 67 00
  00 08 00 14 f6 70 24 65 6d d6 4a 3e 02 b8 e0 71 2e 85 c9 a2 8c a8 96 66`)
const SHORT_TERM_PASSWORD = 'VOkJxbRl1RmTxUk/WvJxBt'
const TRANSACTION = hex('b7 e7 a7 01 bc 34 d6 86 fa 87 df ae')
const SOFTWARE = Buffer.from('test vector')
const MAPPED_IPV4 = { family: 'IPv4', address: '192.0.2.1', port: 32853 } as const
const MAPPED_IPV6 = { family: 'IPv6', address: '2001:db8:1234:5678:11:2233:4455:6677', port: 32853 } as const

const attributeValue = (packet: Buffer, type: number) =>
  decodeStunMessage(packet)?.attributes.find((attribute) => attribute.type === type)?.value

test('RFC 5769 2.1: the sample request parses, with a valid FINGERPRINT and MESSAGE-INTEGRITY', () => {
  const message = decodeStunMessage(SAMPLE_REQUEST)
  assert.ok(message)
  assert.equal(message.method, BINDING)
  assert.equal(message.messageClass, StunClass.Request)
  assert.deepEqual(message.transactionId, TRANSACTION)
  assert.equal(message.fingerprinted, true)
  assert.deepEqual(
    message.attributes.map((attribute) => attribute.type),
    [Attr.Software, Attr.Priority, Attr.IceControlled, Attr.Username, Attr.MessageIntegrity],
  )
  assert.equal(attributeValue(SAMPLE_REQUEST, Attr.Software)?.toString(), 'STUN test client')
  assert.equal(attributeValue(SAMPLE_REQUEST, Attr.Username)?.toString(), 'evtj:h6vY')
  assert.equal(checkIntegrity(SAMPLE_REQUEST, message, SHORT_TERM_PASSWORD), true)
  assert.equal(checkIntegrity(SAMPLE_REQUEST, message, 'not the password'), false)
})

test('RFC 5769 2.2 and 2.3: the sample responses parse to 192.0.2.1 and 2001:db8:…:6677, port 32853', () => {
  for (const [packet, mapped] of [
    [SAMPLE_IPV4_RESPONSE, MAPPED_IPV4],
    [SAMPLE_IPV6_RESPONSE, MAPPED_IPV6],
  ] as const) {
    const message = decodeStunMessage(packet)
    assert.ok(message)
    assert.equal(message.messageClass, StunClass.SuccessResponse)
    assert.equal(message.fingerprinted, true)
    assert.equal(checkIntegrity(packet, message, SHORT_TERM_PASSWORD), true)
    const value = attributeValue(packet, Attr.XorMappedAddress)
    assert.ok(value)
    assert.deepEqual(readXorMappedAddress(value, TRANSACTION), mapped)
    assert.deepEqual(xorMappedAddress(mapped, TRANSACTION), value)
  }
})

test('RFC 5769 2.2 and 2.3: our encoder, given the same attributes and key, makes the responses byte for byte', () => {
  for (const [packet, mapped] of [
    [SAMPLE_IPV4_RESPONSE, MAPPED_IPV4],
    [SAMPLE_IPV6_RESPONSE, MAPPED_IPV6],
  ] as const) {
    const encoded = encodeStunMessage(
      messageType(BINDING, StunClass.SuccessResponse),
      TRANSACTION,
      [
        { type: Attr.Software, value: SOFTWARE },
        { type: Attr.XorMappedAddress, value: xorMappedAddress(mapped, TRANSACTION) },
      ],
      { integrityKey: SHORT_TERM_PASSWORD, padding: 0x20 },
    )
    assert.deepEqual(encoded, packet)
  }
})

test('RFC 5769 2.1 and 2.4: the requests re-encode byte for byte, short-term and long-term keys', () => {
  const request = decodeStunMessage(SAMPLE_REQUEST)
  assert.ok(request)
  const unsealed = request.attributes.filter((attribute) => attribute.type !== Attr.MessageIntegrity)
  const again = encodeStunMessage(0x0001, request.transactionId, unsealed, {
    integrityKey: SHORT_TERM_PASSWORD,
    padding: 0x20,
  })
  assert.deepEqual(again, SAMPLE_REQUEST)

  // §2.4: long-term credentials, key MD5(username ":" realm ":" SASLprep(password)), no FINGERPRINT.
  const longTerm = decodeStunMessage(SAMPLE_LONG_TERM_REQUEST)
  assert.ok(longTerm)
  assert.equal(longTerm.fingerprinted, false)
  assert.equal(attributeValue(SAMPLE_LONG_TERM_REQUEST, Attr.Username)?.toString(), 'マトリックス')
  assert.equal(attributeValue(SAMPLE_LONG_TERM_REQUEST, Attr.Realm)?.toString(), 'example.org')
  const key = createHash('md5').update('マトリックス:example.org:TheMatrIX').digest()
  assert.equal(checkIntegrity(SAMPLE_LONG_TERM_REQUEST, longTerm, key), true)
  const rebuilt = encodeStunMessage(
    0x0001,
    longTerm.transactionId,
    longTerm.attributes.filter((attribute) => attribute.type !== Attr.MessageIntegrity),
    { integrityKey: key, fingerprint: false },
  )
  assert.deepEqual(rebuilt, SAMPLE_LONG_TERM_REQUEST)
})

test('the responder answers the RFC 5769 sample request as a basic server: XOR-MAPPED-ADDRESS, no credentials', () => {
  const software = { type: Attr.Software, value: SOFTWARE }
  for (const mapped of [MAPPED_IPV4, MAPPED_IPV6]) {
    const answer = answerStunPacket(SAMPLE_REQUEST, mapped, software)
    assert.ok(answer)
    assert.equal(answer.outcome, 'answered')
    // The sample response without its MESSAGE-INTEGRITY: a basic server uses no credentials (RFC 8489 §13).
    const expected = encodeStunMessage(messageType(BINDING, StunClass.SuccessResponse), TRANSACTION, [
      software,
      { type: Attr.XorMappedAddress, value: xorMappedAddress(mapped, TRANSACTION) },
    ])
    assert.deepEqual(answer.reply, expected)
    const reply = decodeStunMessage(answer.reply)
    assert.ok(reply?.fingerprinted)
  }
})

test('a FINGERPRINT that does not match, or is not last, makes the message unreadable', () => {
  const wrongCrc = Buffer.from(SAMPLE_REQUEST)
  wrongCrc[wrongCrc.length - 1]! ^= 1
  assert.equal(decodeStunMessage(wrongCrc), undefined)
  // One changed byte in the body: the fingerprint no longer covers it.
  const changed = Buffer.from(SAMPLE_REQUEST)
  changed[30]! ^= 0x20
  assert.equal(decodeStunMessage(changed), undefined)
  const trailing = Buffer.concat([SAMPLE_REQUEST, hex('80 22 00 00')])
  trailing.writeUInt16BE(trailing.length - 20, 2)
  assert.equal(decodeStunMessage(trailing), undefined)
})

test('attributes after MESSAGE-INTEGRITY are not read, except FINGERPRINT (RFC 8489 §14.5)', () => {
  const sealed = encodeStunMessage(0x0001, TRANSACTION, [], { integrityKey: 'key', fingerprint: false })
  const appended = Buffer.concat([sealed, hex('7f ff 00 00'), hex('80 22 00 04 61 62 63 64')])
  appended.writeUInt16BE(appended.length - 20, 2)
  const message = decodeStunMessage(appended)
  assert.ok(message)
  assert.deepEqual(
    message.attributes.map((attribute) => attribute.type),
    [Attr.MessageIntegrity],
  )
  // So an unknown comprehension-required attribute there gets no 420: it is not part of the request.
  assert.equal(answerStunPacket(appended, MAPPED_IPV4, undefined)?.outcome, 'answered')
})

test('an IPv4 peer seen through a dual-stack socket is mapped as IPv4; a zone is dropped', () => {
  assert.deepEqual(canonicalAddress('::ffff:198.51.100.7', 4000), {
    family: 'IPv4',
    address: '198.51.100.7',
    port: 4000,
  })
  assert.deepEqual(canonicalAddress('fe80::1%eth0', 5), { family: 'IPv6', address: 'fe80::1', port: 5 })
  for (const address of ['::1', '::', 'fe80::1:2:3:4', '2001:db8::', '1:0:2:0:3:0:4:0', '::ffff:c000:201']) {
    const mapped = { family: 'IPv6', address, port: 9 } as const
    const read = readXorMappedAddress(xorMappedAddress(mapped, TRANSACTION), TRANSACTION)
    assert.equal(read?.family, 'IPv6')
    assert.equal(
      Buffer.compare(xorMappedAddress(read!, TRANSACTION), xorMappedAddress(mapped, TRANSACTION)),
      0,
      address,
    )
  }
  assert.equal(
    readXorMappedAddress(xorMappedAddress({ ...MAPPED_IPV6, address: '2001:db8::1' }, TRANSACTION), TRANSACTION)
      ?.address,
    '2001:db8::1',
  )
})
