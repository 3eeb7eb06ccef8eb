import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { openEvents, startEventsWorld } from '../../test/events.ts'

forEachDialect(
  'a member receives a message sent through the proxied chat API, and nobody else does',
  async (t, dialect) => {
    const { gateway, signedIn } = await startEventsWorld(t, dialect)
    const [alice, bob, carol, dave] = [await signedIn(), await signedIn(), await signedIn(), await signedIn()]
    const team = (await alice.post('create_chat', { type: 2, name: 'Team', members: [String(bob.crmId)] })).chat.id
    const other = (await carol.post('create_chat', { type: 2, name: 'Other', members: [String(dave.crmId)] })).chat.id
    const bobStream = openEvents(t, gateway.url, bob.cookie)
    const carolStream = openEvents(t, gateway.url, carol.cookie)
    await Promise.all([bobStream.opened(), carolStream.opened()])

    const sent = await alice.post('send_message', { chat_id: team, content: 'Hello Bob' })
    await bobStream.until(() => bobStream.contents().length > 0, 'the message on Bob’s stream')
    await dave.post('send_message', { chat_id: other, content: 'Hello Carol' })
    await carolStream.until(() => carolStream.contents().length > 0, 'the message on Carol’s stream')

    // The chats were created before the streams opened: a stream without since starts fresh.
    assert.equal(bobStream.events.length, 1, JSON.stringify(bobStream.events))
    const [event] = bobStream.events
    assert.equal(event!.module, 'chat')
    assert.equal(event!.type, 'NewChatMessage')
    assert.equal(event!.data.content, 'Hello Bob')
    assert.equal(event!.data.chat_id, team)
    assert.equal(event!.data.message_id, sent.id)
    assert.equal(event!.data.sender, String(alice.crmId))
    assert.equal(String(event!.tick), event!.data.tick, 'tick is the cursor value the module gave the event')
    assert.equal(bobStream.ids[0], String(event!.tick), 'the SSE id is the tick')

    assert.deepEqual(carolStream.contents(), ['Hello Carol'])
    assert.ok(!JSON.stringify(carolStream.events).includes('Hello Bob'), 'Carol receives nothing of the other chat')
    // A later message to Bob is the barrier: anything of Carol's chat would reach him before it.
    await alice.post('send_message', { chat_id: team, content: 'after' })
    await bobStream.until(() => bobStream.contents().includes('after'), 'the later message on Bob’s stream')
    assert.deepEqual(bobStream.contents(), ['Hello Bob', 'after'], 'Bob receives nothing of Carol’s chat')
  },
)

forEachDialect('an anonymous subscribe is refused with the SessionRequired envelope', async (t, dialect) => {
  const { gateway, proxy } = await startEventsWorld(t, dialect)
  const response = await fetch(`${gateway.url}/auth/v1/subscribe?since=1`)
  assert.equal(response.status, 401)
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
  const body = await json(response)
  assert.equal(body.error.code, 2003)
  assert.equal(typeof body.id, 'string')
  assert.equal(proxy.calls.length, 0, 'nothing is polled while nobody is subscribed')
})

forEachDialect('the stream is text/event-stream with id and data lines and heartbeat comments', async (t, dialect) => {
  const { gateway, signedIn } = await startEventsWorld(t, dialect)
  const [alice, bob] = [await signedIn(), await signedIn()]
  const chat = (await alice.post('create_chat', { type: 1, peer: String(bob.crmId) })).chat.id
  const controller = new AbortController()
  t.after(() => controller.abort())
  const response = await fetch(`${gateway.url}/auth/v1/subscribe`, {
    headers: { cookie: bob.cookie },
    signal: controller.signal,
  })
  assert.equal(response.status, 200)
  assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  assert.equal(response.headers.get('cache-control'), 'no-store')
  assert.equal(response.headers.get('x-accel-buffering'), 'no')
  assert.match(response.headers.get('x-request-id') ?? '', /./, 'the headers of the onRequest hooks come along')
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  async function readUntil(pattern: RegExp) {
    const deadline = Date.now() + 10_000
    while (!pattern.test(text)) {
      assert.ok(Date.now() < deadline, `timed out waiting for ${pattern} in ${JSON.stringify(text)}`)
      const { value, done } = await reader.read()
      assert.ok(!done, 'the stream stays open')
      text += value
    }
  }
  await readUntil(/^: subscribed\n\n/)
  await alice.post('send_message', { chat_id: chat, content: 'Ping' })
  await readUntil(/\n\n(id: \d+\ndata: [^\n]+\n\n)/)
  const frame = /\nid: (\d+)\ndata: ([^\n]+)\n\n/.exec(text)!
  const event = JSON.parse(frame[2]!)
  assert.deepEqual(Object.keys(event), ['module', 'tick', 'type', 'data'])
  assert.equal(event.tick, Number(frame[1]))
  assert.equal(event.data.content, 'Ping')
  // FAST_EVENTS sets HeartbeatSeconds to 1.
  await readUntil(/: heartbeat\n\n/)
})

forEachDialect(
  'with heartbeat=event the heartbeats are messages carrying the period, the first at once',
  async (t, dialect) => {
    const { gateway, signedIn } = await startEventsWorld(t, dialect)
    const bob = await signedIn()
    const controller = new AbortController()
    t.after(() => controller.abort())
    const response = await fetch(`${gateway.url}/auth/v1/subscribe?heartbeat=event`, {
      headers: { cookie: bob.cookie },
      signal: controller.signal,
    })
    assert.equal(response.status, 200)
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    const startedAt = Date.now()
    const count = () => text.split('event: heartbeat\ndata: 1\n\n').length - 1
    // FAST_EVENTS sets HeartbeatSeconds to 1: one message at once, then one for each silent second.
    while (count() < 3) {
      assert.ok(Date.now() - startedAt < 10_000, `timed out: ${JSON.stringify(text)}`)
      const { value, done } = await reader.read()
      assert.ok(!done, 'the stream stays open')
      text += value
    }
    assert.match(text, /^: subscribed\n\nevent: heartbeat\ndata: 1\n\n/, 'the first follows the subscribed comment')
    assert.doesNotMatch(text, /^: heartbeat$/m, 'no heartbeat comments besides')
    assert.ok(Date.now() - startedAt >= 1000, 'the later ones come once the stream was silent')
    const refused = await fetch(`${gateway.url}/auth/v1/subscribe?heartbeat=comment`, {
      headers: { cookie: bob.cookie },
    })
    assert.equal(refused.status, 400)
    assert.equal((await json(refused)).error.code, 1000, 'InvalidRequest')
  },
)

forEachDialect('the bytes of the stream count against the session’s bandwidth limit', async (t, dialect) => {
  const Bytes = 2000
  const { gateway, signedIn } = await startEventsWorld(t, dialect, {
    settings: { RateLimits: { Bandwidth: { Bytes, WindowSeconds: 600 } } },
  })
  const [alice, bob] = [await signedIn(), await signedIn()]
  const chat = (await alice.post('create_chat', { type: 1, peer: String(bob.crmId) })).chat.id
  const stream = openEvents(t, gateway.url, bob.cookie)
  await stream.opened()
  const health = () => fetch(`${gateway.url}/auth/v1/health`, { headers: { cookie: bob.cookie } })
  assert.equal((await health()).status, 200, 'the subscribe request alone is far below the limit')

  await alice.direct.ok('send_message', { chat_id: chat, content: 'x'.repeat(Bytes) })
  await stream.until(() => stream.contents().length === 1, 'the long message')
  const refused = await health()
  assert.equal(refused.status, 429)
  assert.deepEqual((await json(refused)).error.details.scope, 'bandwidth')
})
