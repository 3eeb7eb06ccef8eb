import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { test } from 'node:test'
import type { BroadcastEvent } from '@atrium/platform'
import { createHeartbeats } from './heartbeats.ts'
import { toChunk } from './sse-chunks.ts'
import { Subscriber } from './subscriber.ts'

/** A response whose client reads only while `reading` is set, as a socket with a full buffer would. */
function createResponse() {
  const response = Object.assign(new EventEmitter(), {
    written: [] as string[],
    reading: true,
    writableNeedDrain: false,
    writableEnded: false,
    writableFinished: false,
    destroyed: false,
    write(chunk: string | Uint8Array) {
      response.written.push(Buffer.from(chunk).toString())
      if (!response.reading) response.writableNeedDrain = true
      return response.reading
    },
    end() {
      response.writableEnded = true
    },
    destroy() {
      response.destroyed = true
    },
    /** The client read everything: Node clears the flag and emits 'drain'. */
    drain() {
      response.reading = true
      response.writableNeedDrain = false
      response.emit('drain')
    },
  })
  return response
}

const frameOf = (event: BroadcastEvent) => toChunk(`id: ${event.tick}\ndata: ${JSON.stringify(event)}\n\n`)
const event = (tick: number): BroadcastEvent => ({ module: 'chat', tick, type: 'NewChatMessage', data: {} })

function open(maxQueued: number, heartbeatMs = 60_000) {
  const response = createResponse()
  const counted: number[] = []
  let closes = 0
  const subscriber = new Subscriber({
    response,
    subjects: ['user:1'],
    frameOf,
    maxQueued,
    heartbeats: createHeartbeats(heartbeatMs),
    countSent: (bytes) => counted.push(bytes),
    onClose: () => closes++,
  })
  subscriber.attach('chat', 1, 0)
  subscriber.open()
  subscriber.goLive(new Map())
  return { response, subscriber, counted, closes: () => closes }
}

test('a stream whose client stops reading gets a slow-consumer resync and is ended', () => {
  const { response, subscriber, closes } = open(2)
  response.reading = false
  for (let tick = 1; tick <= 3; tick++) subscriber.offer('chat', 1, event(tick))
  assert.equal(subscriber.closed, true)
  assert.equal(closes(), 1)
  assert.equal(response.writableEnded, true)
  assert.equal(response.written.at(-1), 'id: 3\nevent: resync\ndata: {"reason":"slow-consumer","tick":3}\n\n')
  subscriber.offer('chat', 1, event(4))
  assert.equal(response.written.length, 4, 'nothing is written after the close')
})

test('a stream that overflows while it joins still gets its resync once the head is written', () => {
  const response = createResponse()
  let closes = 0
  const subscriber = new Subscriber({
    response,
    subjects: ['user:1'],
    frameOf,
    maxQueued: 2,
    heartbeats: createHeartbeats(60_000),
    countSent: () => {},
    onClose: () => closes++,
  })
  subscriber.attach('chat', 1, 0)
  for (let tick = 1; tick <= 3; tick++) subscriber.offer('chat', 1, event(tick))
  assert.equal(subscriber.closed, true)
  assert.equal(closes, 1)
  assert.deepEqual(response.written, [], 'nothing before the head')
  subscriber.open()
  assert.deepEqual(response.written, ['id: 0\nevent: resync\ndata: {"reason":"slow-consumer","tick":0}\n\n'])
  assert.equal(response.writableEnded, true)
})

test('a drain forgives the writes the client had not read before it', () => {
  const { response, subscriber } = open(2)
  response.reading = false
  subscriber.offer('chat', 1, event(1))
  subscriber.offer('chat', 1, event(2))
  response.drain()
  response.reading = false
  subscriber.offer('chat', 1, event(3))
  subscriber.offer('chat', 1, event(4))
  assert.equal(subscriber.closed, false, 'two refused writes since the drain are within maxQueued')
  assert.deepEqual(
    response.written.map((text) => /^id: (\d+)/.exec(text)?.[1]),
    ['1', '2', '3', '4'],
  )
})

test('every byte written to the stream is counted for the bandwidth limit', () => {
  const { response, subscriber, counted } = open(10)
  subscriber.comment('subscribed')
  subscriber.offer('chat', 1, event(1))
  subscriber.resync('replay-failed', 1, 'chat')
  assert.deepEqual(
    counted,
    response.written.map((text) => Buffer.byteLength(text)),
  )
  assert.equal(counted.length, 3)
})

test('only a stream silent for a whole heartbeat period gets a heartbeat', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] })
  const quiet = open(10, 1000)
  const busy = open(10, 1000)
  for (let step = 1; step <= 4; step++) {
    t.mock.timers.tick(250)
    busy.subscriber.offer('chat', 1, event(step))
  }
  assert.deepEqual(quiet.response.written, [': heartbeat\n\n'])
  assert.ok(!busy.response.written.some((text) => text.includes('heartbeat')))
  quiet.subscriber.close()
  t.mock.timers.tick(2000)
  assert.deepEqual(quiet.response.written, [': heartbeat\n\n'], 'a closed stream gets no more')
})
