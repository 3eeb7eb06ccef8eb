/**
 * The load of bench/stun.ts, one process per client: `node bench/stun-client.ts <port> <window>
 * <warmup-s> <seconds> [<sources>]` keeps `window` Binding requests in flight to 127.0.0.1:<port>,
 * spread over `sources` UDP sockets (1 by default; the kernel spreads a reusePort server's sockets
 * over source ports, so one socket reaches one server thread), each answer sending the next from
 * the same socket, and after the warm-up counts answers and their latencies
 * for `seconds`. A request unanswered after 500 ms counts as lost and is replaced. Prints one JSON
 * line: answers, lost, and up to 100,000 latencies (µs) sampled evenly from the measured window.
 */

import { randomBytes } from 'node:crypto'
import { createSocket, type Socket } from 'node:dgram'

const LOST_AFTER_NS = 500_000_000n
const SAMPLE = 100_000
const MAGIC = Buffer.from([0x21, 0x12, 0xa4, 0x42])

/** A Binding request (no attributes) whose transaction id ends in the 32-bit `sequence`. */
export function bindingRequestPacket(sequence: number, prefix: Buffer = Buffer.alloc(8)): Buffer {
  const packet = Buffer.alloc(20)
  packet.writeUInt16BE(0x0001, 0)
  MAGIC.copy(packet, 4)
  prefix.copy(packet, 8, 0, 8)
  packet.writeUInt32BE(sequence >>> 0, 16)
  return packet
}

async function main(port: number, window: number, warmupSeconds: number, seconds: number, sources: number) {
  const sockets = await Promise.all(
    Array.from({ length: sources }, async () => {
      const socket = createSocket({ type: 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 1 << 20 })
      await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
      return socket
    }),
  )
  const prefix = randomBytes(8)
  const sentAt = new Map<number, { at: bigint; socket: Socket }>()
  let sequence = 0
  let measuring = false
  let answers = 0
  let lost = 0
  const latencies: number[] = []
  let seen = 0

  function send(socket: Socket) {
    const id = sequence++ >>> 0
    sentAt.set(id, { at: process.hrtime.bigint(), socket })
    socket.send(bindingRequestPacket(id, prefix), port, '127.0.0.1')
  }

  function onAnswer(this: Socket, packet: Buffer) {
    if (packet.length < 20 || packet.compare(prefix, 0, 8, 8, 16) !== 0) return
    const id = packet.readUInt32BE(16)
    const sent = sentAt.get(id)
    if (sent === undefined) return
    sentAt.delete(id)
    if (measuring) {
      answers++
      const micros = Number(process.hrtime.bigint() - sent.at) / 1000
      // Reservoir sampling keeps an even sample of the whole window in bounded memory.
      seen++
      if (latencies.length < SAMPLE) latencies.push(micros)
      else {
        const slot = Math.floor(Math.random() * seen)
        if (slot < SAMPLE) latencies[slot] = micros
      }
    }
    send(this)
  }
  for (const socket of sockets) socket.on('message', onAnswer)

  const sweep = setInterval(() => {
    const now = process.hrtime.bigint()
    for (const [id, { at, socket }] of sentAt) {
      if (now - at < LOST_AFTER_NS) continue
      sentAt.delete(id)
      if (measuring) lost++
      send(socket)
    }
  }, 100)

  for (let i = 0; i < window; i++) send(sockets[i % sources]!)
  await new Promise((resolve) => setTimeout(resolve, warmupSeconds * 1000))
  measuring = true
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  measuring = false
  clearInterval(sweep)
  for (const socket of sockets) socket.close()
  console.log(JSON.stringify({ answers, lost, latencies }))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [port, window, warmup, seconds, sources = 1] = process.argv.slice(2).map(Number) as number[]
  await main(port!, window!, warmup!, seconds!, sources)
}
