/**
 * The runtime's floor for bench/sse.ts: a bare `node:http` pub/sub SSE server with nchan's shape and
 * nothing of the gateway (no framework, sessions, modules or replay). Subscribers open
 * `GET /sub/<channel>`; the publisher POSTs the event's data to `/pub/<channel>`, and the frame,
 * made once, is written to every stream of that channel. Heartbeats as the gateway's (sse-floor.ts).
 *   node bench/sse-node.ts <response|socket> <heartbeat seconds> <memory file>
 * `response` writes each frame through the stream's `ServerResponse` (Node frames the chunk);
 * `socket` writes the frame, already framed as one HTTP/1.1 chunk, straight to the socket.
 * Prints `{"port": N}` once listening; SIGHUP collects garbage (with --expose-gc) and writes
 * `process.memoryUsage()` to the memory file.
 */
import { createServer } from 'node:http'
import { toChunk } from '../packages/gateway/src/events/sse-chunks.ts'
import { stopWithParent } from './child-process.ts'
import { createFloorStreams, type FloorStream, listenOnLoopback } from './sse-floor.ts'

const [mode, heartbeatArg, memoryFile] = process.argv.slice(2)
if ((mode !== 'response' && mode !== 'socket') || !heartbeatArg || !memoryFile) {
  throw new Error('usage: node bench/sse-node.ts <response|socket> <heartbeat seconds> <memory file>')
}
const streams = createFloorStreams({
  heartbeatMs: Number(heartbeatArg) * 1000,
  memoryFile,
  toSocket: mode === 'socket',
})
const channels = new Map<string, Set<FloorStream>>()

const server = createServer((request, response) => {
  const [, kind, channel] = request.url?.split('/') ?? []
  if (request.method === 'GET' && kind === 'sub' && channel) {
    const members = channels.get(channel) ?? new Set<FloorStream>()
    channels.set(channel, members)
    const stream = streams.open(response, () => members.delete(stream))
    members.add(stream)
    return
  }
  if (request.method === 'POST' && kind === 'pub' && channel) {
    const parts: Buffer[] = []
    request.on('data', (part: Buffer) => parts.push(part))
    request.on('end', () => {
      const chunk = toChunk(`data: ${Buffer.concat(parts).toString('utf8')}\n\n`)
      for (const stream of channels.get(channel) ?? []) streams.write(stream, chunk)
      response.writeHead(201, { 'content-length': 0 }).end()
    })
    return
  }
  response.writeHead(404, { 'content-length': 0 }).end()
})

stopWithParent(async () => {
  server.closeAllConnections()
  server.close()
})
listenOnLoopback(server)
