/**
 * The runtime's floor for the gateway's side of bench/sse.ts that does the gateway's work: a bare
 * `node:http` SSE server that, like the gateway, learns its events by long-polling the chat
 * module's events endpoint (spec: "Module events endpoint") for its subscribers' subjects, and
 * nothing else of the gateway (no framework, sessions, replay, metrics or limits). Subscribers open
 * `GET /sub/<crmId>`; their `user:` subjects are polled in chunks of `<chunk subjects>` in the order
 * they opened, one long-poll loop per chunk with its cursor from the clock, each call signed as the
 * gateway signs it (undici's `request`, as the gateway's poller). Each item's frame is made once per
 * event and written, as one HTTP/1.1 chunk, straight to the socket of the member's stream;
 * heartbeats as the gateway's (sse-floor.ts).
 *   node bench/sse-node-poll.ts <chat module base> <service secret> <heartbeat seconds> <chunk subjects> <memory file>
 * Prints `{"port": N}` once listening; SIGHUP collects garbage (with --expose-gc) and writes
 * `process.memoryUsage()` to the memory file.
 */
import { createServer } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { signedHeaders, timetickAt } from '@atrium/platform'
import { request } from 'undici'
import { toChunk } from '../packages/gateway/src/events/sse-chunks.ts'
import { stopWithParent } from './child-process.ts'
import { createFloorStreams, type FloorStream, listenOnLoopback } from './sse-floor.ts'

const [base = '', secret = '', heartbeatArg, chunkArg, memoryFile] = process.argv.slice(2)
if (!base || !secret || !heartbeatArg || !chunkArg || !memoryFile) {
  throw new Error(
    'usage: node bench/sse-node-poll.ts <chat base> <secret> <heartbeat s> <chunk subjects> <memory file>',
  )
}
const heartbeatMs = Number(heartbeatArg) * 1000
const chunkSubjects = Number(chunkArg)
const WAIT_MS = 25_000
const LIMIT = 500

interface Chunk {
  subjects: string[]
  cursor: number
  call: AbortController | undefined
}

const floor = createFloorStreams({ heartbeatMs, memoryFile, toSocket: true })
const streams = new Map<number, Set<FloorStream>>()
const chunks: Chunk[] = []
let stopped = false

interface Item {
  CrmId: number
  TickUpdate: number
  EventType: string
  Data: unknown
}

async function poll(chunk: Chunk) {
  while (!stopped) {
    const call = new AbortController()
    chunk.call = call
    const url =
      `${base}/private/v1/events?since=${chunk.cursor}&subjects=${chunk.subjects.join(',')}` +
      `&limit=${LIMIT}&wait=${WAIT_MS}`
    try {
      const response = await request(url, { headers: signedHeaders(secret, 'GET', url), signal: call.signal })
      const { result } = (await response.body.json()) as { result: { Events: Item[]; LastTick: number } }
      let frame: Buffer | undefined
      let tick = 0
      for (const item of result.Events) {
        if (item.TickUpdate !== tick) {
          tick = item.TickUpdate
          // The gateway's frame: the event as the spec's SSE data (module, tick, type, data).
          const event = { module: 'chat', tick, type: item.EventType, data: item.Data }
          frame = toChunk(`id: ${tick}\ndata: ${JSON.stringify(event)}\n\n`)
        }
        for (const stream of streams.get(item.CrmId) ?? []) floor.write(stream, frame!)
      }
      chunk.cursor = result.LastTick
    } catch {
      // A restart for a new subject aborts the call; anything else is retried after a pause.
      if (!call.signal.aborted) await sleep(200)
    }
  }
}

/** Adds a subject to the newest chunk (a new chunk when it is full), restarting that chunk's call. */
function join(crmId: number) {
  let chunk = chunks.at(-1)
  if (!chunk || chunk.subjects.length >= chunkSubjects) {
    chunk = { subjects: [], cursor: timetickAt(Date.now()), call: undefined }
    chunks.push(chunk)
    chunk.subjects.push(`user:${crmId}`)
    poll(chunk)
    return
  }
  chunk.subjects.push(`user:${crmId}`)
  chunk.call?.abort()
}

const server = createServer((request, response) => {
  const [, kind, id] = request.url?.split('/') ?? []
  const crmId = Number(id)
  if (request.method !== 'GET' || kind !== 'sub' || !Number.isSafeInteger(crmId) || crmId <= 0) {
    response.writeHead(404, { 'content-length': 0 }).end()
    return
  }
  const mine = streams.get(crmId) ?? new Set<FloorStream>()
  streams.set(crmId, mine)
  if (mine.size === 0) join(crmId)
  const stream = floor.open(response, () => mine.delete(stream))
  mine.add(stream)
})

stopWithParent(async () => {
  stopped = true
  for (const chunk of chunks) chunk.call?.abort()
  server.closeAllConnections()
  server.close()
})
listenOnLoopback(server)
