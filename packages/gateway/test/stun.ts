import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createSocket } from 'node:dgram'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { until } from '@atrium/platform/testing'
import {
  BINDING,
  decodeStunMessage,
  encodeStunMessage,
  messageType,
  type StunAttribute,
  StunClass,
} from '../src/stun/stun-message.ts'

/** The message type of a Binding request. */
export const BINDING_REQUEST = messageType(BINDING, StunClass.Request)

/** A Binding request with a fresh transaction id, the given attributes and (by default) a FINGERPRINT. */
export function bindingRequest(attributes: StunAttribute[] = [], fingerprint = true) {
  const transactionId = randomBytes(12)
  return { transactionId, packet: encodeStunMessage(BINDING_REQUEST, transactionId, attributes, { fingerprint }) }
}

/**
 * A UDP socket that talks to one STUN server and keeps every datagram it receives, so that a test
 * can tell an answer from silence: a dropped packet followed by a good request gets only the good
 * request's answer, because loopback keeps the order and the server answers in order.
 */
export async function stunClient(
  t: TestContext,
  server: { address: string; port: number },
  /** The client's own address; loopback of the server's family when omitted (any 127.x.y.z is loopback). */
  from = server.address.includes(':') ? '::1' : '127.0.0.1',
) {
  const socket = createSocket({ type: server.address.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 1 << 22 })
  const received: Buffer[] = []
  socket.on('message', (packet) => received.push(packet))
  await new Promise<void>((resolve) => socket.bind(0, from, resolve))
  t.after(() => new Promise<void>((resolve) => socket.close(() => resolve())))

  function send(packet: Buffer) {
    socket.send(packet, server.port, server.address)
  }

  /** The first received datagram whose transaction id is this one, once it arrives. */
  async function answerTo(transactionId: Buffer) {
    let found: Buffer | undefined
    await until(() => {
      found = received.find((packet) => packet.length >= 20 && packet.subarray(8, 20).equals(transactionId))
      return found !== undefined
    }, 'a STUN answer')
    const message = decodeStunMessage(found!)
    assert.ok(message, 'the answer is a well-formed STUN message')
    return { packet: found!, message }
  }

  return {
    local: socket.address() as AddressInfo,
    received,
    send,
    answerTo,
    /** Sends a Binding request and waits for its answer. */
    async exchange(attributes: StunAttribute[] = []) {
      const { transactionId, packet } = bindingRequest(attributes)
      send(packet)
      return { transactionId, ...(await answerTo(transactionId)) }
    },
  }
}
