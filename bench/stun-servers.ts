/**
 * The STUN servers of bench/stun.ts that are Node processes, each started as a child so that its
 * CPU time can be read from /proc; the first stdout line is `{"port": n}`.
 *   node bench/stun-servers.ts gateway <db-url>   the whole gateway (HTTP on an ephemeral loopback
 *                                                 port, its STUN responder on the same UDP port)
 *   node bench/stun-servers.ts node-echo          the runtime's floor: a bare node:dgram socket that
 *                                                 sends back a prepared Binding success of the same
 *                                                 size as the gateway's, with the request's transaction
 *                                                 id copied in (no parsing, no checks, no encoding)
 */
import { createSocket } from 'node:dgram'
import { Attr } from '../packages/gateway/src/stun/stun-message.ts'
import { answerStunPacket } from '../packages/gateway/src/stun/stun-responder.ts'
import { buildBenchGateway, listenOnLoopback } from './bench-gateway.ts'
import { stopWithParent } from './child-process.ts'
import { bindingRequestPacket } from './stun-client.ts'

const SERVICE_SECRET = 'stun-bench-service-secret'.padEnd(40, '-')

async function gateway(db: string) {
  const { app } = await buildBenchGateway({ GatewayDB: db, ServiceSecret: SERVICE_SECRET })
  const port = await listenOnLoopback(app)
  await app.stun.listening()
  stopWithParent(() => app.close())
  return port
}

async function nodeEcho() {
  // The gateway's own answer to a request from a loopback client, computed once.
  const prepared = answerStunPacket(
    bindingRequestPacket(0),
    { family: 'IPv4', address: '127.0.0.1', port: 40_000 },
    { type: Attr.Software, value: Buffer.from('Atrium') },
  )
  if (!prepared) throw new Error('no answer to prepare')
  const reply = prepared.reply
  const socket = createSocket({ type: 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 1 << 20 })
  socket.on('message', (packet, remote) => {
    if (packet.length < 20) return
    packet.copy(reply, 8, 8, 20)
    socket.send(reply, remote.port, remote.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  stopWithParent(async () => socket.close())
  return socket.address().port
}

const [mode, db] = process.argv.slice(2)
const port = mode === 'gateway' ? await gateway(db ?? '') : await nodeEcho()
console.log(JSON.stringify({ port }))
