/**
 * SSE subscribers of bench/sse.ts, forked with an IPC channel: each stream is a raw HTTP/1.1
 * keep-alive connection (a `GET` with its headers, no EventSource library), so the client costs
 * little per connection. Every event's data carries `sse-bench:<publish time in epoch ms>`; the
 * arrival time minus that is the event's latency (same machine, same clock).
 *
 * Messages from the parent: `connect` (opens the streams, answers `connected`), `mark` (starts
 * keeping events published from a time on), `report` (answers the events published before a time,
 * counted by their publish time, not by when they arrived: an event published in the window
 * counts once whenever it arrives, so duplicates or losses show against what was due), `close`.
 */
import { connect, type Socket } from 'node:net'

export interface StreamSpec {
  path: string
  /** Extra request header lines, e.g. `cookie: …`. */
  headers: string[]
}

export type ClientMessage =
  /** `localAddress`: the loopback address the streams come from, so each process has its own ephemeral ports. */
  | { type: 'connect'; port: number; streams: StreamSpec[]; concurrency: number; localAddress: string }
  | { type: 'mark'; from: number }
  | { type: 'report'; until: number }
  | { type: 'close' }

export interface ClientReport {
  type: 'report'
  /** Deliveries of events published between the mark and the report's time. */
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
/** Publish time (epoch ms) and latency of each delivery kept since the mark. */
let kept: { published: number; latency: number }[] = []
let from = Number.POSITIVE_INFINITY
let ended = 0

const epochNow = () => performance.timeOrigin + performance.now()

/** Opens one stream; resolves with an error text when it did not answer 200. */
function open(port: number, localAddress: string, stream: StreamSpec): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress })
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
        const published = Number(match[1])
        if (published >= from) kept.push({ published, latency: arrived - published })
      }
    })
  })
}

async function openAll({ port, localAddress, streams, concurrency }: ClientMessage & { type: 'connect' }) {
  let next = 0
  let failed = 0
  let firstError: string | undefined
  async function loop() {
    while (next < streams.length) {
      const error = await open(port, localAddress, streams[next++]!)
      if (error === undefined) continue
      failed++
      firstError ??= error
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  const connected: ClientConnected = {
    type: 'connected',
    connected: sockets.length,
    failed,
    ...(firstError ? { firstError } : {}),
  }
  return connected
}

process.on('message', async (message: ClientMessage) => {
  if (message.type === 'connect') {
    process.send!(await openAll(message))
  } else if (message.type === 'mark') {
    from = message.from
    kept = []
  } else if (message.type === 'report') {
    const inWindow = kept.filter((delivery) => delivery.published < message.until)
    const latencies = inWindow.map((delivery) => delivery.latency)
    const report: ClientReport = { type: 'report', received: inWindow.length, latencies, ended }
    process.send!(report)
  } else {
    for (const socket of sockets) socket.destroy()
    process.disconnect()
  }
})
process.on('disconnect', () => process.exit(0))
