/**
 * What the bare SSE floors of bench/sse.ts (sse-node.ts, sse-node-poll.ts) do alike: open a stream,
 * write HTTP/1.1 chunks to it, send a `: heartbeat` comment to streams silent for a whole period
 * (one timer, as the gateway does), write `process.memoryUsage()` to the memory file on SIGHUP
 * (after a collection, with --expose-gc), and listen on loopback printing `{"port": N}`.
 */
import type { Server, ServerResponse } from 'node:http'
import { frameIn, toChunk } from '../packages/gateway/src/events/sse-chunks.ts'
import { writeFileAtomically } from './child-process.ts'

export interface FloorStream {
  response: ServerResponse
  silentChecks: number
}

const HEARTBEAT = toChunk(': heartbeat\n\n')

/**
 * The floor's streams. With `toSocket` a chunk goes straight to the socket, already framed;
 * otherwise the frame in it goes through the response, which frames it again.
 */
export function createFloorStreams({
  heartbeatMs,
  memoryFile,
  toSocket,
}: {
  heartbeatMs: number
  memoryFile: string
  toSocket: boolean
}) {
  const all = new Set<FloorStream>()

  /** Writes a frame made as an HTTP/1.1 chunk (the gateway's sse-chunks.ts). */
  function write(stream: FloorStream, chunk: Uint8Array) {
    stream.silentChecks = 0
    if (toSocket) stream.response.socket?.write(chunk)
    else stream.response.write(frameIn(chunk))
  }

  setInterval(() => {
    for (const stream of all) if (++stream.silentChecks >= 2) write(stream, HEARTBEAT)
  }, heartbeatMs / 2).unref()

  process.on('SIGHUP', () => {
    globalThis.gc?.()
    writeFileAtomically(memoryFile, JSON.stringify(process.memoryUsage()))
  })

  return {
    write,
    /** Answers `response` as an SSE stream; `onClose` runs when it closes. */
    open(response: ServerResponse, onClose: () => void): FloorStream {
      response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' })
      // The head goes out with the first chunk, through the response, so later raw writes follow it.
      response.write(': subscribed\n\n')
      const stream: FloorStream = { response, silentChecks: 0 }
      all.add(stream)
      response.once('close', () => {
        all.delete(stream)
        onClose()
      })
      return stream
    },
  }
}

/** Listens on an ephemeral loopback port and prints `{"port": N}` for the benchmark. */
export function listenOnLoopback(server: Server) {
  server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 }, () => {
    const address = server.address()
    if (!address || typeof address === 'string') throw new Error('no port')
    process.stdout.write(`${JSON.stringify({ port: address.port })}\n`)
  })
}
