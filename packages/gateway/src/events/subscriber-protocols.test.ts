import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage, ServerResponse } from 'node:http'
import { connect as connectHttp2, createServer as createHttp2Server, type Http2ServerResponse } from 'node:http2'
import { type AddressInfo, connect } from 'node:net'
import { type TestContext, test } from 'node:test'
import type { BroadcastEvent } from '@atrium/platform'
import { createHeartbeats } from './heartbeats.ts'
import { toChunk } from './sse-chunks.ts'
import { Subscriber } from './subscriber.ts'

const frame = (event: BroadcastEvent) => `id: ${event.tick}\ndata: ${JSON.stringify(event)}\n\n`
const event = (tick: number): BroadcastEvent => ({ module: 'chat', tick, type: 'NewChatMessage', data: { text: 'ü' } })

/** A live subscriber on `response`, opened after its head, as the events plugin makes one. */
function subscribe(response: ServerResponse | Http2ServerResponse, maxQueued: number) {
  // The two response types overload writeHead differently, so TypeScript takes neither on the union.
  const head = { 'content-type': 'text/event-stream; charset=utf-8' }
  if (response instanceof ServerResponse) response.writeHead(200, head)
  else response.writeHead(200, head)
  const subscriber = new Subscriber({
    response,
    subjects: ['user:1'],
    frameOf: (event) => toChunk(frame(event)),
    maxQueued,
    heartbeats: createHeartbeats(60_000),
    countSent: () => {},
    onClose: () => {},
  })
  subscriber.attach('chat', 1, 0)
  subscriber.open()
  return subscriber
}

/** Answers a stream: the head, a comment, two events, then the end. */
function stream(response: ServerResponse | Http2ServerResponse) {
  const subscriber = subscribe(response, 10)
  subscriber.comment('subscribed')
  subscriber.goLive(new Map())
  subscriber.offer('chat', 1, event(1))
  subscriber.offer('chat', 1, event(2))
  subscriber.close()
}

const EXPECTED = `: subscribed\n\n${frame(event(1))}${frame(event(2))}`

async function listen(t: TestContext, handler: (request: IncomingMessage, response: ServerResponse) => void) {
  const server = createServer(handler)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => server.close())
  return (server.address() as AddressInfo).port
}

/** Sends `request` on a raw socket and answers every byte the server sent until it closed or the last chunk came. */
async function exchange(port: number, request: string): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  socket.end(request)
  let received = ''
  for await (const bytes of socket) {
    received += (bytes as Buffer).toString('latin1')
    if (received.endsWith('\r\n0\r\n\r\n')) break
  }
  socket.destroy()
  return Buffer.from(received, 'latin1').toString('utf8')
}

/** Decodes a chunked body (RFC 9112 §7.1), failing on anything that is not well-formed. */
function dechunk(body: string): string[] {
  const chunks: string[] = []
  let rest = Buffer.from(body)
  for (;;) {
    const lineEnd = rest.indexOf('\r\n')
    assert.ok(lineEnd > 0, `a chunk size line in ${JSON.stringify(rest.toString())}`)
    const size = Number.parseInt(rest.subarray(0, lineEnd).toString(), 16)
    assert.match(rest.subarray(0, lineEnd).toString(), /^[0-9a-f]+$/)
    const data = rest.subarray(lineEnd + 2, lineEnd + 2 + size)
    assert.equal(rest.subarray(lineEnd + 2 + size, lineEnd + 4 + size).toString(), '\r\n', 'a chunk ends in CRLF')
    rest = rest.subarray(lineEnd + 4 + size)
    if (size === 0) break
    chunks.push(data.toString())
  }
  assert.equal(rest.length, 0, 'nothing after the last chunk')
  return chunks
}

test('an HTTP/1.1 stream sends its head, then each frame as one well-formed chunk, then the last chunk', async (t) => {
  const port = await listen(t, (_request, response) => stream(response))
  const received = await exchange(port, 'GET /auth/v1/subscribe HTTP/1.1\r\nHost: localhost\r\n\r\n')
  const [head = '', body = ''] = received.split(/\r\n\r\n(.*)/s)
  assert.match(head, /^HTTP\/1\.1 200 OK\r\n/)
  assert.match(head, /\r\ntransfer-encoding: chunked/i)
  assert.deepEqual(dechunk(body), [': subscribed\n\n', frame(event(1)), frame(event(2))])
})

test('an HTTP/1.0 stream gets its frames without chunks, ended by the close', async (t) => {
  const port = await listen(t, (_request, response) => stream(response))
  const received = await exchange(port, 'GET /auth/v1/subscribe HTTP/1.0\r\nHost: localhost\r\n\r\n')
  const [head = '', body] = received.split(/\r\n\r\n(.*)/s)
  assert.doesNotMatch(head, /transfer-encoding/i)
  assert.equal(body, EXPECTED)
})

test('an HTTP/1.1 stream pipelined behind an unfinished answer gets its frames after it', async (t) => {
  let first: ServerResponse | undefined
  const port = await listen(t, (request, response) => {
    if (request.url === '/first') {
      first = response
      return
    }
    stream(response)
    // The stream waits behind the first answer, which ends only now.
    first?.end('first')
  })
  const received = await exchange(
    port,
    'GET /first HTTP/1.1\r\nHost: localhost\r\n\r\nGET /auth/v1/subscribe HTTP/1.1\r\nHost: localhost\r\n\r\n',
  )
  assert.match(received, /^HTTP\/1\.1 200 OK\r\n.*\r\ncontent-length: 5\r\n\r\nfirstHTTP\/1\.1 200 OK\r\n/is)
  const second = received.slice(received.indexOf('firstHTTP/1.1') + 'first'.length)
  assert.deepEqual(dechunk(second.split(/\r\n\r\n(.*)/s)[1]!), [': subscribed\n\n', frame(event(1)), frame(event(2))])
})

test('an HTTP/2 stream gets its frames through the response', async (t) => {
  const server = createHttp2Server((_request, response) => stream(response))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => server.close())
  const client = connectHttp2(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  t.after(() => client.close())
  const request = client.request({ ':path': '/auth/v1/subscribe' })
  const [headers] = (await once(request, 'response')) as [Record<string, string>]
  assert.equal(headers[':status'], 200)
  let body = ''
  for await (const bytes of request) body += (bytes as Buffer).toString('latin1')
  assert.equal(Buffer.from(body, 'latin1').toString('utf8'), EXPECTED)
})

test('an HTTP/1.1 stream whose client stops reading overflows on its socket and is closed with a resync', async (t) => {
  const big = 'x'.repeat(64 * 1024)
  let closed: Promise<boolean> | undefined
  const port = await listen(t, (_request, response) => {
    const subscriber = subscribe(response, 2)
    subscriber.goLive(new Map())
    // 16 MB, more than loopback's socket buffers take while nobody reads.
    closed = (async () => {
      for (let tick = 1; tick <= 256 && !subscriber.closed; tick++) {
        subscriber.offer('chat', 1, { module: 'chat', tick, type: 'NewChatMessage', data: { big } })
        await new Promise((resolve) => setImmediate(resolve))
      }
      return subscriber.closed
    })()
  })
  const socket = connect(port, '127.0.0.1')
  t.after(() => socket.destroy())
  socket.pause()
  socket.write('GET /auth/v1/subscribe HTTP/1.1\r\nHost: localhost\r\n\r\n')
  while (!closed) await new Promise((resolve) => setTimeout(resolve, 5))
  assert.equal(await closed, true, 'the stream was closed as a slow consumer')
})
