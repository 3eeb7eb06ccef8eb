/**
 * SSE subscribers of bench/sse.ts, forked with an IPC channel: each stream is a raw HTTP/1.1
 * keep-alive connection (a `GET` with its headers, no EventSource library), so the client costs
 * little per connection. Every event's data carries `sse-bench:<publish time in epoch ms>`; the
 * arrival time minus that is the event's latency (same machine, same clock).
 *
 * Messages from the parent: `connect` (opens the streams, answers `connected`), `mark` (starts a
 * measurement window), `report` (answers what arrived since the mark), `close`.
 */
import { connect, type Socket } from 'node:net'

export interface StreamSpec {
  path: string
  /** Extra request header lines, e.g. `cookie: …`. */
  headers: string[]
}

export type ClientMessage =
  | { type: 'connect'; port: number; streams: StreamSpec[]; concurrency: number }
  | { type: 'mark' }
  | { type: 'report' }
  | { type: 'close' }

export interface ClientReport {
  type: 'report'
  /** Events received since the mark. */
  received: number
  /** Their latencies in ms. */
  latencies: number[]
  /** Streams that ended since they were opened. */
  ended: number
}

export interface ClientConnected {
  type: 'connected'
  connected: number
  failed: number
  firstError?: string
}

const MARKER = /sse-bench:(\d+(?:\.\d+)?)/g
const CONNECT_TIMEOUT_MS = 60_000
const sockets: Socket[] = []
let received = 0
let latencies: number[] = []
let ended = 0

const epochNow = () => performance.timeOrigin + performance.now()

/** Opens one stream; resolves with an error text when it did not answer 200. */
function open(port: number, stream: StreamSpec): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.setNoDelay(true)
    let head = ''
    let rest = ''
    let live = false
    const timer = setTimeout(() => fail('no answer in time'), CONNECT_TIMEOUT_MS)
    function fail(why: string) {
      clearTimeout(timer)
      socket.destroy()
      resolve(why)
    }
    socket.once('connect', () => {
      const lines = [`GET ${stream.path} HTTP/1.1`, 'host: 127.0.0.1', 'accept: text/event-stream', ...stream.headers]
      socket.write(`${lines.join('\r\n')}\r\n\r\n`)
    })
    socket.on('error', (error) => (live ? undefined : fail(error.message)))
    socket.on('close', () => {
      if (live) ended++
      else fail(`closed before the stream opened: ${head.slice(0, 200)}`)
    })
    socket.on('data', (chunk: Buffer) => {
      const arrived = epochNow()
      if (!live) {
        head += chunk.toString('latin1')
        const end = head.indexOf('\r\n\r\n')
        if (end < 0) return
        if (!head.startsWith('HTTP/1.1 200')) return fail(head.slice(0, 300))
        live = true
        clearTimeout(timer)
        sockets.push(socket)
        rest = head.slice(end + 4)
        resolve(undefined)
      } else rest += chunk.toString('latin1')
      // Whole SSE frames end with a blank line; a frame split across reads waits for its end.
      const last = rest.lastIndexOf('\n\n')
      if (last < 0) return
      const frames = rest.slice(0, last)
      rest = rest.slice(last + 2)
      for (const match of frames.matchAll(MARKER)) {
        received++
        latencies.push(arrived - Number(match[1]))
      }
    })
  })
}

async function openAll(port: number, streams: StreamSpec[], concurrency: number): Promise<ClientConnected> {
  let next = 0
  let failed = 0
  let firstError: string | undefined
  async function loop() {
    while (next < streams.length) {
      const error = await open(port, streams[next++]!)
      if (error === undefined) continue
      failed++
      firstError ??= error
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  return { type: 'connected', connected: sockets.length, failed, ...(firstError ? { firstError } : {}) }
}

process.on('message', async (message: ClientMessage) => {
  if (message.type === 'connect') {
    process.send!(await openAll(message.port, message.streams, message.concurrency))
  } else if (message.type === 'mark') {
    received = 0
    latencies = []
  } else if (message.type === 'report') {
    const report: ClientReport = { type: 'report', received, latencies, ended }
    process.send!(report)
  } else {
    for (const socket of sockets) socket.destroy()
    process.disconnect()
  }
})
process.on('disconnect', () => process.exit(0))
