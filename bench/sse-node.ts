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

/** A frame as the bytes of one HTTP/1.1 chunk: size line, frame, CRLF. */
function chunked(frame: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${frame.byteLength.toString(16)}\r\n`), frame, Buffer.from('\r\n')])
}

const HEARTBEAT = Buffer.from(': heartbeat\n\n')
const HEARTBEAT_CHUNK = chunked(HEARTBEAT)

function write(stream: Stream, frame: Buffer, chunk: Buffer) {
  stream.silentChecks = 0
  if (mode === 'response') stream.response.write(frame)
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
      const frame = Buffer.from(`data: ${Buffer.concat(parts).toString('utf8')}\n\n`)
      const chunk = chunked(frame)
      for (const stream of channels.get(channel) ?? []) write(stream, frame, chunk)
      response.writeHead(201, { 'content-length': 0 }).end()
    })
    return
  }
  response.writeHead(404, { 'content-length': 0 }).end()
})

setInterval(() => {
  for (const stream of all) if (++stream.silentChecks >= 2) write(stream, HEARTBEAT, HEARTBEAT_CHUNK)
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
