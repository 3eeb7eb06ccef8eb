/**
 * The STUN servers of bench/stun.ts that are Node processes, each started as a child so that its
 * CPU time can be read from /proc; the first stdout line is `{"port": n}`.
 *   node bench/stun-servers.ts gateway <db-url> <threads>
 *       the whole gateway (HTTP on an ephemeral loopback port, its STUN responder on the same UDP
 *       port) with Stun.Threads = <threads> (0: on the main thread)
 *   node bench/stun-servers.ts node-echo <threads>
 *       the runtime's floor: bare node:dgram sockets that send back a prepared Binding success of
 *       the same size as the gateway's, with the request's transaction id copied in (no parsing, no
 *       checks, no encoding); on the main thread with 0, else one socket in each of <threads>
 *       worker threads sharing the port with reusePort, as the gateway's threads do
 */
import { createSocket } from 'node:dgram'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { Attr } from '../packages/gateway/src/stun/stun-message.ts'
import { answerStunPacket } from '../packages/gateway/src/stun/stun-socket.ts'
import { buildBenchGateway, listenOnLoopback } from './bench-gateway.ts'
import { stopWithParent } from './child-process.ts'
import { bindingRequestPacket } from './stun-client.ts'

const SERVICE_SECRET = 'stun-bench-service-secret'.padEnd(40, '-')

async function gateway(db: string, threads: number) {
  const { app } = await buildBenchGateway({ GatewayDB: db, ServiceSecret: SERVICE_SECRET, Stun: { Threads: threads } })
  const port = await listenOnLoopback(app)
  await app.stun.listening()
  stopWithParent(() => app.close())
  return port
}

/** One echo socket on `port` (0: any), with reusePort when threads share it; resolves to its port. */
async function echoSocket(port: number, reusePort: boolean): Promise<number> {
  // The gateway's own answer to a request from a loopback client, computed once.
  const prepared = answerStunPacket(
    bindingRequestPacket(0),
    { family: 'IPv4', address: '127.0.0.1', port: 40_000 },
    { type: Attr.Software, value: Buffer.from('Atrium') },
  )
  if (!prepared) throw new Error('no answer to prepare')
  const reply = prepared.reply
  const socket = createSocket({ type: 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 1 << 20, reusePort })
  socket.on('message', (packet, remote) => {
    if (packet.length < 20) return
    packet.copy(reply, 8, 8, 20)
    socket.send(reply, remote.port, remote.address)
  })
  await new Promise<void>((resolve) => socket.bind(port, '127.0.0.1', resolve))
  return socket.address().port
}

/** A worker thread's echo socket: binds the port it is given and says so. */
async function echoThread(port: number) {
  parentPort!.postMessage(await echoSocket(port, true))
}

function startEchoThread(port: number): Promise<number> {
  const worker = new Worker(new URL(import.meta.url), { workerData: port })
  return new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
}

async function nodeEcho(threads: number) {
  stopWithParent(async () => process.exit(0))
  if (threads === 0) return echoSocket(0, false)
  const port = await startEchoThread(0)
  await Promise.all(Array.from({ length: threads - 1 }, () => startEchoThread(port)))
  return port
}

if (isMainThread) {
  const [mode, ...rest] = process.argv.slice(2)
  const port =
    mode === 'gateway' ? await gateway(rest[0] ?? '', Number(rest[1] ?? 0)) : await nodeEcho(Number(rest[0] ?? 0))
  console.log(JSON.stringify({ port }))
} else {
  await echoThread(workerData as number)
}
