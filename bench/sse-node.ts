/**
 * The runtime's floor for bench/sse.ts: a bare `node:http` pub/sub SSE server with nchan's shape and
 * nothing of the gateway (no framework, sessions, modules or replay). Subscribers open
 * `GET /sub/<channel>`; the publisher POSTs the event's data to `/pub/<channel>`, and the frame,
 * made once, is written to every stream of that channel. One timer sends a `: heartbeat` comment to
 * streams silent for a whole period, as the gateway does.
 *   node bench/sse-node.ts <response|socket> <heartbeat seconds> <memory file>
 * `response` writes each frame through the stream's `ServerResponse` (Node frames the chunk);
 * `socket` writes the frame, already framed as one HTTP/1.1 chunk, straight to the socket.
 * Prints `{"port": N}` once listening; SIGHUP collects garbage (with --expose-gc) and writes
 * `process.memoryUsage()` to the memory file.
 */
import { createServer, type ServerResponse } from 'node:http'
import { frameIn, toChunk } from '../packages/gateway/src/events/sse-chunks.ts'
import { stopWithParent, writeFileAtomically } from './child-process.ts'

const [mode, heartbeatArg, memoryFile] = process.argv.slice(2)
if ((mode !== 'response' && mode !== 'socket') || !heartbeatArg || !memoryFile) {
  throw new Error('usage: node bench/sse-node.ts <response|socket> <heartbeat seconds> <memory file>')
}
const heartbeatMs = Number(heartbeatArg) * 1000

interface Stream {
  response: ServerResponse
  silentChecks: number
}

const channels = new Map<string, Set<Stream>>()
const all = new Set<Stream>()

const HEARTBEAT = toChunk(': heartbeat\n\n')

/** Writes a frame made as an HTTP/1.1 chunk (the gateway's sse-chunks.ts): the chunk to the socket, or the frame in it to the response. */
function write(stream: Stream, chunk: Uint8Array) {
  stream.silentChecks = 0
  if (mode === 'response') stream.response.write(frameIn(chunk))
  else stream.response.socket?.write(chunk)
}

const server = createServer((request, response) => {
  const [, kind, channel] = request.url?.split('/') ?? []
  if (request.method === 'GET' && kind === 'sub' && channel) {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' })
    // The head goes out with the first chunk, through the response, so later raw writes follow it.
    response.write(': subscribed\n\n')
    const stream: Stream = { response, silentChecks: 0 }
    const members = channels.get(channel) ?? new Set<Stream>()
    channels.set(channel, members)
    members.add(stream)
    all.add(stream)
    response.once('close', () => {
      members.delete(stream)
      all.delete(stream)
    })
    return
  }
  if (request.method === 'POST' && kind === 'pub' && channel) {
    const parts: Buffer[] = []
    request.on('data', (part: Buffer) => parts.push(part))
    request.on('end', () => {
      const chunk = toChunk(`data: ${Buffer.concat(parts).toString('utf8')}\n\n`)
      for (const stream of channels.get(channel) ?? []) write(stream, chunk)
      response.writeHead(201, { 'content-length': 0 }).end()
    })
    return
  }
  response.writeHead(404, { 'content-length': 0 }).end()
})

setInterval(() => {
  for (const stream of all) if (++stream.silentChecks >= 2) write(stream, HEARTBEAT)
}, heartbeatMs / 2).unref()

process.on('SIGHUP', () => {
  globalThis.gc?.()
  writeFileAtomically(memoryFile, JSON.stringify(process.memoryUsage()))
})
stopWithParent(async () => {
  server.closeAllConnections()
  server.close()
})
server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 }, () => {
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('no port')
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`)
})
