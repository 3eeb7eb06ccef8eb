import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { existsSync } from 'node:fs'
import test, { type TestContext } from 'node:test'
import { json } from '@atrium/platform/testing'
import { bindingRequest, stunClient } from '../../test/stun.ts'
import { capturedLog, signedInUser, startGateway } from '../../test/support.ts'
import {
  Attr,
  BINDING,
  encodeStunMessage,
  MAGIC_COOKIE,
  messageType,
  readXorMappedAddress,
  StunClass,
} from './stun-message.ts'
import { MAX_REQUEST_BYTES } from './stun-socket.ts'

/** A gateway with its STUN responder bound, and where that is. */
async function startStunGateway(t: TestContext, stun: Record<string, unknown> = {}) {
  const gateway = await startGateway(t, 'sqlite', { settings: { Stun: stun } })
  const [bound] = await gateway.app.stun.listening()
  assert.ok(bound, 'the STUN socket is bound')
  return { ...gateway, stunAddress: { address: bound.address, port: bound.port } }
}

const xorMapped = (message: { attributes: { type: number; value: Buffer }[]; transactionId: Buffer }) => {
  const value = message.attributes.find((attribute) => attribute.type === Attr.XorMappedAddress)?.value
  return value && readXorMappedAddress(value, message.transactionId)
}

test('a Binding request over UDP, to the HTTP port number, is answered with the address it came from', async (t) => {
  const { url, stunAddress } = await startStunGateway(t)
  assert.equal(stunAddress.port, Number(new URL(url).port), 'UDP on the same port number as HTTP')

  const client = await stunClient(t, stunAddress)
  const { transactionId, message, packet } = await client.exchange()
  assert.equal(message.messageClass, StunClass.SuccessResponse)
  assert.equal(message.method, BINDING)
  assert.deepEqual(message.transactionId, transactionId)
  assert.equal(packet.readUInt32BE(4), MAGIC_COOKIE)
  assert.equal(message.fingerprinted, true, 'the answer carries a FINGERPRINT that matches')
  assert.deepEqual(xorMapped(message), { family: 'IPv4', address: '127.0.0.1', port: client.local.port })
  const software = message.attributes.find((attribute) => attribute.type === Attr.Software)
  assert.equal(software?.value.toString(), 'Atrium')
  // Credentials are not used by a basic server (RFC 8489 §13): no MESSAGE-INTEGRITY in the answer.
  assert.equal(message.integrityOffset, -1)
})

test('over IPv6 the answer maps the IPv6 source; a dual-stack socket maps an IPv4 source as IPv4', async (t) => {
  const v6 = await startStunGateway(t, { Host: '::1', Software: '' })
  const client = await stunClient(t, v6.stunAddress)
  const { message } = await client.exchange()
  assert.deepEqual(xorMapped(message), { family: 'IPv6', address: '::1', port: client.local.port })
  assert.equal(
    message.attributes.some((attribute) => attribute.type === Attr.Software),
    false,
    'an empty Software leaves SOFTWARE out',
  )

  const dual = await startStunGateway(t, { Host: '::' })
  const ipv4 = await stunClient(t, { address: '127.0.0.1', port: dual.stunAddress.port })
  const seen = await ipv4.exchange()
  assert.deepEqual(xorMapped(seen.message), { family: 'IPv4', address: '127.0.0.1', port: ipv4.local.port })
})

test('malformed packets, non-requests, other methods, a wrong cookie or FINGERPRINT, oversized: no answer', async (t) => {
  const { app, stunAddress } = await startStunGateway(t)
  const client = await stunClient(t, stunAddress)
  const good = bindingRequest()
  const withLength = (packet: Buffer, length: number) => {
    const copy = Buffer.from(packet)
    copy.writeUInt16BE(length, 2)
    return copy
  }
  const flipped = (packet: Buffer, at: number) => {
    const copy = Buffer.from(packet)
    copy[at]! ^= 0x01
    return copy
  }
  const silent: Record<string, Buffer> = {
    empty: Buffer.alloc(0),
    'shorter than a header': good.packet.subarray(0, 19),
    'truncated attribute': good.packet.subarray(0, good.packet.length - 4),
    'length longer than the packet': withLength(good.packet, good.packet.length - 20 + 4),
    'length not a multiple of 4': withLength(Buffer.concat([good.packet, Buffer.alloc(2)]), good.packet.length - 18),
    'attribute running past the end': (() => {
      const packet = encodeStunMessage(0x0001, good.transactionId, [{ type: 0x8022, value: Buffer.from('abcd') }], {
        fingerprint: false,
      })
      packet.writeUInt16BE(40, 22)
      return packet
    })(),
    'top bits set (not STUN)': flipped(good.packet, 0).fill(0xc0, 0, 1),
    'wrong magic cookie': flipped(good.packet, 7),
    'wrong FINGERPRINT': flipped(good.packet, good.packet.length - 1),
    'a success response': encodeStunMessage(messageType(BINDING, StunClass.SuccessResponse), good.transactionId, []),
    'a Binding indication': encodeStunMessage(messageType(BINDING, StunClass.Indication), good.transactionId, []),
    'an Allocate request (TURN, not served here)': encodeStunMessage(messageType(0x003, 0), good.transactionId, []),
    oversized: encodeStunMessage(0x0001, good.transactionId, [
      { type: Attr.Software, value: Buffer.alloc(MAX_REQUEST_BYTES, 0x61) },
    ]),
    'RFC 3489 request without the cookie': (() => {
      const packet = Buffer.from(good.packet.subarray(0, 20))
      packet.writeUInt16BE(0, 2)
      packet.writeUInt32BE(0x01020304, 4)
      return packet
    })(),
  }
  for (const packet of Object.values(silent)) client.send(packet)
  // Same transaction id as most of the above: had any been answered, its answer would be found first.
  const control = bindingRequest()
  client.send(control.packet)
  await client.answerTo(control.transactionId)
  assert.equal(client.received.length, 1, 'only the well-formed request was answered')
  assert.equal(app.stun.counts().dropped, Object.keys(silent).length)
  assert.equal(app.stun.counts().answered, 1)

  // Just within the limit is still answered.
  const largest = bindingRequest([{ type: Attr.Software, value: Buffer.alloc(MAX_REQUEST_BYTES - 20 - 4 - 8, 0x61) }])
  assert.equal(largest.packet.length, MAX_REQUEST_BYTES)
  client.send(largest.packet)
  await client.answerTo(largest.transactionId)
})

test('unknown comprehension-required attributes are answered 420 and listed in UNKNOWN-ATTRIBUTES', async (t) => {
  const { app, stunAddress } = await startStunGateway(t)
  const client = await stunClient(t, stunAddress)
  const { message } = await client.exchange([
    { type: Attr.ChangeRequest, value: Buffer.from([0, 0, 0, 6]) },
    { type: 0x7fff, value: Buffer.from('x') },
    // Comprehension-optional (0x8000 and up): ignored, never listed.
    { type: 0xc0de, value: Buffer.alloc(4) },
    { type: 0x7fff, value: Buffer.alloc(0) },
    // Understood: ICE's PRIORITY and a USERNAME, which a basic server reads and ignores.
    { type: Attr.Priority, value: Buffer.alloc(4) },
    { type: Attr.Username, value: Buffer.from('someone') },
  ])
  assert.equal(message.messageClass, StunClass.ErrorResponse)
  assert.equal(message.method, BINDING)
  assert.equal(message.fingerprinted, true)
  const errorCode = message.attributes.find((attribute) => attribute.type === Attr.ErrorCode)?.value
  assert.ok(errorCode)
  assert.equal(errorCode[2]! * 100 + errorCode[3]!, 420)
  assert.equal(errorCode.subarray(4).toString(), 'Unknown Attribute')
  const unknown = message.attributes.find((attribute) => attribute.type === Attr.UnknownAttributes)?.value
  assert.ok(unknown)
  assert.deepEqual(
    Array.from({ length: unknown.length / 2 }, (_, i) => unknown.readUInt16BE(i * 2)),
    [Attr.ChangeRequest, 0x7fff],
  )
  assert.equal(xorMapped(message), undefined, 'no mapped address in an error response')
  assert.equal(app.stun.counts().unknownAttributes, 1)

  // Only known attributes: answered.
  const ice = await client.exchange([{ type: Attr.Priority, value: Buffer.alloc(4) }])
  assert.equal(ice.message.messageClass, StunClass.SuccessResponse)
})

test('a burst of 500 requests gets 500 answers, each to its own transaction and source', async (t) => {
  const { app, stunAddress } = await startStunGateway(t)
  const client = await stunClient(t, stunAddress)
  const requests = Array.from({ length: 500 }, () => bindingRequest())
  for (const { packet } of requests) client.send(packet)
  for (const { transactionId } of requests) {
    const { message } = await client.answerTo(transactionId)
    assert.deepEqual(xorMapped(message)?.port, client.local.port)
  }
  assert.equal(client.received.length, 500)
  assert.equal(app.stun.counts().answered, 500)
  // The last ten from this address are kept for /auth/v1/stun/current, newest first.
  const seen = app.stun.bindingsFrom('127.0.0.1')
  assert.equal(seen.length, 10)
  assert.ok(seen.every((binding) => binding.port === client.local.port && binding.outcome === 'answered'))
})

test('the responder remembers at most Stun.TrackedSources source addresses; the one seen first goes', async (t) => {
  const { app, stunAddress } = await startStunGateway(t, { TrackedSources: 2 })
  for (const from of ['127.0.0.1', '127.0.0.2', '127.0.0.3']) {
    const client = await stunClient(t, stunAddress, from)
    const { message } = await client.exchange()
    assert.equal(xorMapped(message)?.address, from)
  }
  assert.deepEqual(app.stun.bindingsFrom('127.0.0.1'), [])
  assert.equal(app.stun.bindingsFrom('127.0.0.2').length, 1)
  assert.equal(app.stun.bindingsFrom('127.0.0.3').length, 1)
})

test('the STUN socket closes with the gateway, and is not opened when Stun.Enabled is false', async (t) => {
  const { app, stunAddress } = await startStunGateway(t)
  await app.close()
  // The port is free again: an exclusive bind to it succeeds.
  const probe = createSocket('udp4')
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject)
    probe.bind({ port: stunAddress.port, address: stunAddress.address, exclusive: true }, resolve)
  })
  await new Promise<void>((resolve) => probe.close(() => resolve()))

  const off = await startGateway(t, 'sqlite', { settings: { Stun: { Enabled: false } } })
  assert.deepEqual(await off.app.stun.listening(), [])
  assert.deepEqual(off.app.stun.addresses(), [])
  const person = await signedInUser(off)
  const current = await fetch(`${off.url}/auth/v1/stun/current`, { headers: person.headers })
  assert.deepEqual((await json(current)).result.stun, { enabled: false, listening: false, port: 0 })
})

test('a UDP port already taken is logged, and the gateway goes on serving HTTP', async (t) => {
  const holder = createSocket('udp4')
  await new Promise<void>((resolve) => holder.bind({ port: 0, address: '127.0.0.1', exclusive: true }, resolve))
  t.after(() => new Promise<void>((resolve) => holder.close(() => resolve())))
  const log = capturedLog()
  const gateway = await startGateway(t, 'sqlite', {
    settings: { Stun: { Port: holder.address().port } },
    logger: { level: 'error', stream: log.stream },
  })
  await assert.rejects(gateway.app.stun.listening(), { code: 'EADDRINUSE' })
  assert.ok(log.lines.some((line) => line.includes('STUN responder could not bind')))
  assert.equal((await fetch(`${gateway.url}/auth/v1/health`)).status, 200)
  assert.deepEqual(gateway.app.stun.addresses(), [])
})

test("coturn's STUN client reads our answer: its mapped address is its own address", async (t) => {
  const client = '/usr/bin/turnutils_stunclient'
  if (!existsSync(client)) {
    const message = 'coturn is not installed (apt-get install coturn)'
    if (process.env.ATRIUM_REQUIRE_COTURN === '1') assert.fail(`${message}; ATRIUM_REQUIRE_COTURN=1 requires it`)
    t.skip(message)
    return
  }
  const { app, stunAddress } = await startStunGateway(t)
  const output = await new Promise<string>((resolve, reject) => {
    execFile(client, ['-p', String(stunAddress.port), '127.0.0.1'], { timeout: 10_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(`${stdout}${stderr}`),
    )
  })
  const [seen] = app.stun.bindingsFrom('127.0.0.1')
  assert.ok(seen, 'the responder saw its request')
  // It prints the XOR-MAPPED-ADDRESS it read; that must be the source the responder saw.
  assert.match(output, new RegExp(`127\\.0\\.0\\.1:${seen.port}\\b`))
})
