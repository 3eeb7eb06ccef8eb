import assert from 'node:assert/strict'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import { timetickAt } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { EventSource } from 'eventsource'
import { startEventsWorld } from '../../gateway/test/events.ts'
import {
  type BroadcastEvent,
  type EventSourceConstructor,
  type LiveStatus,
  openLiveEvents,
  type Resync,
  type TickStorage,
  type TypingSignal,
} from './live-events.ts'

/** The `eventsource` package sending a session cookie (Node has no cookie jar), recording each URL it opens. */
function eventSourceWithCookie(cookie: string, opened: string[]): EventSourceConstructor {
  return class CookieEventSource extends EventSource {
    constructor(url: string, init?: { withCredentials?: boolean }) {
      opened.push(url)
      super(url, {
        ...init,
        fetch: (input, requestInit) => fetch(input, { ...requestInit, headers: { ...requestInit.headers, cookie } }),
      })
    }
  } as unknown as EventSourceConstructor
}

function memoryStorage(): TickStorage & { values: Map<string, string> } {
  const values = new Map<string, string>()
  return { values, getItem: (key) => values.get(key) ?? null, setItem: (key, value) => void values.set(key, value) }
}

/** A live-events client for a signed-in user of the world, collecting what it receives. */
function follow(
  t: TestContext,
  world: Awaited<ReturnType<typeof startEventsWorld>>,
  user: { cookie: string },
  storage: TickStorage = memoryStorage(),
) {
  const events: BroadcastEvent[] = []
  const resyncs: Resync[] = []
  const statuses: LiveStatus[] = []
  const opened: string[] = []
  const typing: TypingSignal[] = []
  const live = openLiveEvents({
    url: `${world.gateway.url}/auth/v1/subscribe`,
    EventSource: eventSourceWithCookie(user.cookie, opened),
    storage,
    retry: { minMs: 50, maxMs: 300 },
    onEvent: (event) => events.push(event),
    onResync: (resync) => resyncs.push(resync),
    onStatus: (status) => statuses.push(status),
    onTyping: (signal) => typing.push(signal),
  })
  t.after(() => live.close())
  async function until(condition: () => boolean, what: string) {
    const deadline = Date.now() + 15_000
    while (!condition()) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; got ${JSON.stringify(events)}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  const contents = () => events.map((event) => event.data.content)
  return { live, events, resyncs, statuses, opened, typing, until, contents }
}

async function groupOf(world: Awaited<ReturnType<typeof startEventsWorld>>) {
  const [alice, bob] = [await world.signedIn(), await world.signedIn()]
  const chat = (await alice.direct.ok('create_chat', { type: 2, name: 'Team', members: [String(bob.crmId)] })).chat.id
  const send = (content: string) => alice.direct.ok('send_message', { chat_id: chat, content })
  return { alice, bob, send }
}

forEachDialect(
  'after a gateway restart the client resumes from its largest tick: nothing missed, nothing twice',
  async (t, dialect) => {
    const world = await startEventsWorld(t, dialect)
    const { bob, send } = await groupOf(world)
    const storage = memoryStorage()
    const client = follow(t, world, bob, storage)
    await client.until(() => client.statuses.includes('live'), 'the stream to open')
    await send('one')
    await send('two')
    await client.until(() => client.events.length === 2, 'the first messages')
    const beforeRestart = client.live.maxTick

    await world.gateway.stop()
    await send('three')
    await send('four')
    await world.gateway.start()
    await client.until(() => client.events.length === 4, 'the messages sent while the gateway was down')
    await send('five')
    await client.until(() => client.events.length === 5, 'the live message after the reconnect')
    // A later message is the barrier: an event delivered twice would come before it.
    await send('six')
    await client.until(() => client.contents().includes('six'), 'a later message')

    assert.deepEqual(client.contents(), ['one', 'two', 'three', 'four', 'five', 'six'])
    const ticks = client.events.map((event) => event.tick)
    assert.deepEqual(
      ticks,
      [...ticks].sort((a, b) => a - b),
    )
    assert.equal(new Set(ticks).size, 6, 'no event twice')
    assert.ok(client.statuses.includes('offline'), 'the break was noticed')
    assert.equal(client.opened[0], `${world.gateway.url}/auth/v1/subscribe?heartbeat=event`, 'the first has no since')
    assert.ok(
      client.opened.slice(1).every((url) => url.startsWith(`${world.gateway.url}/auth/v1/subscribe?since=`)),
      JSON.stringify(client.opened),
    )
    const resumedFrom = client.opened.map((url) => Number(new URL(url).searchParams.get('since') ?? 0))
    assert.ok(resumedFrom.includes(beforeRestart), 'a reconnect asked for what came after the largest tick seen')
    assert.equal(client.live.maxTick, ticks.at(-1))
    assert.equal(storage.values.get('atrium.events.maxTick'), String(ticks.at(-1)), 'the largest tick is stored')
  },
)

forEachDialect('a reloaded page resumes from the stored tick and gets only what it missed', async (t, dialect) => {
  const world = await startEventsWorld(t, dialect)
  const { bob, send } = await groupOf(world)
  const storage = memoryStorage()
  const first = follow(t, world, bob, storage)
  await first.until(() => first.statuses.includes('live'), 'the stream to open')
  await send('seen')
  await first.until(() => first.events.length === 1, 'the first message')
  first.live.close()

  await send('missed')
  const reloaded = follow(t, world, bob, storage)
  await reloaded.until(() => reloaded.events.length === 1, 'the missed message')
  await send('live')
  await reloaded.until(() => reloaded.events.length === 2, 'the live message')
  assert.deepEqual(reloaded.contents(), ['missed', 'live'])
  assert.equal(
    reloaded.opened[0],
    `${world.gateway.url}/auth/v1/subscribe?since=${first.events[0]!.tick}&heartbeat=event`,
  )
})

forEachDialect('a stored tick older than the replay window gets a resync, then live events', async (t, dialect) => {
  const world = await startEventsWorld(t, dialect)
  const { bob, send } = await groupOf(world)
  await send('old news')
  const storage = memoryStorage()
  const stale = timetickAt(Date.now() - 25 * 3600 * 1000)
  storage.setItem('atrium.events.maxTick', String(stale))
  const client = follow(t, world, bob, storage)
  await client.until(() => client.resyncs.length === 1, 'the resync')
  await send('fresh')
  await client.until(() => client.events.length === 1, 'the live message')
  assert.equal(client.resyncs[0]!.reason, 'too-old')
  assert.ok(client.resyncs[0]!.tick > stale)
  assert.deepEqual(client.contents(), ['fresh'], 'nothing older is replayed')
  assert.equal(client.live.maxTick, client.events[0]!.tick)
})

test('modules may interleave: only a repeat within a module is dropped, and the reconnect uses the largest tick', async (t) => {
  // A minimal SSE peer: the first stream sends interleaved modules, a repeat and junk, then ends.
  const requests: string[] = []
  const server = createServer((request, response) => {
    requests.push(request.url!)
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    const frame = (module: string, tick: number) =>
      `id: ${tick}\ndata: ${JSON.stringify({ module, tick, type: 'Test', data: { n: tick } })}\n\n`
    if (requests.length === 1) {
      response.end(
        [frame('chat', 10), frame('wallet', 12), frame('chat', 11), frame('chat', 10), 'data: not json\n\n'].join(''),
      )
    } else {
      response.write(frame('wallet', 13))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  const events: BroadcastEvent[] = []
  const live = openLiveEvents({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/v1/subscribe`,
    EventSource: EventSource as unknown as EventSourceConstructor,
    retry: { minMs: 20, maxMs: 50 },
    onEvent: (event) => events.push(event),
  })
  t.after(() => live.close())
  const deadline = Date.now() + 5000
  while (events.length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.deepEqual(
    events.map((event) => `${event.module}:${event.tick}`),
    ['chat:10', 'wallet:12', 'chat:11', 'wallet:13'],
  )
  assert.deepEqual(requests, ['/auth/v1/subscribe?heartbeat=event', '/auth/v1/subscribe?since=12&heartbeat=event'])
  assert.equal(live.maxTick, 13)
})

test('typing frames reach onTyping and leave the largest tick where it was', async (t) => {
  const world = await startEventsWorld(t, 'sqlite')
  const { alice, bob, send } = await groupOf(world)
  const client = follow(t, world, bob)
  await client.until(() => client.statuses.includes('live'), 'the stream to open')
  await send('before')
  await client.until(() => client.events.length === 1, 'the message')
  const tick = client.live.maxTick
  const chatId = String(client.events[0]!.data.chat_id)
  const answer = await fetch(`${world.gateway.url}/auth/v1/typing`, {
    method: 'POST',
    headers: { cookie: alice.cookie, 'x-csrf-token': alice.csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ chat_id: chatId }),
  })
  assert.equal(answer.status, 200)
  await client.until(() => client.typing.length === 1, 'the typing frame')
  assert.deepEqual(client.typing, [{ chat_id: chatId, user: String(alice.crmId), expires_ms: 6000 }])
  assert.equal(client.live.maxTick, tick, 'a typing frame is not an event')
  assert.equal(client.events.length, 1)
})

/** A stand-in gateway whose streams do what `serve` says with each request (its number from 1). */
async function standInStreams(t: TestContext, serve: (number: number, response: ServerResponse) => void) {
  const requests: { url: string; at: number }[] = []
  const timers: ReturnType<typeof setInterval>[] = []
  const server = createServer((request, response) => {
    requests.push({ url: request.url!, at: Date.now() })
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    serve(requests.length, response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const timer of timers) clearInterval(timer)
    server.closeAllConnections()
    server.close()
  })
  const statuses: LiveStatus[] = []
  const live = openLiveEvents({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/v1/subscribe`,
    EventSource: EventSource as unknown as EventSourceConstructor,
    retry: { minMs: 20, maxMs: 50 },
    minSilenceMs: 0,
    onEvent: () => {},
    onStatus: (status) => statuses.push(status),
  })
  t.after(() => live.close())
  const every = (ms: number, work: () => void) => timers.push(setInterval(work, ms))
  return { requests, statuses, every }
}

test('a stream that goes silent after announcing its heartbeat period is opened again', async (t) => {
  const periodSeconds = 0.2
  const heartbeat = `event: heartbeat\ndata: ${periodSeconds}\n\n`
  let silentSince = 0
  // The second stream announces a longer period and beats far more often, so a stall of the test
  // process cannot pass for its silence.
  const steady = 'event: heartbeat\ndata: 1\n\n'
  const stand = await standInStreams(t, (number, response) => {
    // The first stream then says nothing more with its connection open, as a gateway whose host
    // went away; the second keeps beating.
    if (number === 1) {
      response.write(heartbeat)
      silentSince = Date.now()
    } else {
      response.write(steady)
      stand.every(100, () => response.write(steady))
    }
  })
  const deadline = Date.now() + 5000
  while (stand.requests.length < 2) {
    assert.ok(Date.now() < deadline, 'the silent stream was never replaced')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const waited = stand.requests[1]!.at - silentSince
  const silenceMs = periodSeconds * 1000 * 2.5
  assert.ok(waited >= silenceMs, `replaced after ${waited} ms, before ${silenceMs} ms of silence`)
  assert.ok(waited < silenceMs + 1000, `replaced only after ${waited} ms`)
  assert.deepEqual(stand.statuses.slice(0, 3), ['connecting', 'live', 'offline'])
  // A stream that beats is kept, however long: longer than its own 2.5 s of silence here.
  await new Promise((resolve) => setTimeout(resolve, 3000))
  assert.equal(stand.requests.length, 2, JSON.stringify(stand.requests))
})

test('a stream whose heartbeats are comments (an older gateway) is never timed out', async (t) => {
  const stand = await standInStreams(t, (_number, response) => {
    response.write(': heartbeat\n\n')
  })
  const deadline = Date.now() + 5000
  while (!stand.statuses.includes('live')) {
    assert.ok(Date.now() < deadline, 'the stream never opened')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  // Silent for 1 s, twice the longest the test above waits: still the first stream.
  await new Promise((resolve) => setTimeout(resolve, 1000))
  assert.equal(stand.requests.length, 1)
  assert.deepEqual(stand.statuses, ['connecting', 'live'])
})
