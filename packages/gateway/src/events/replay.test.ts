import assert from 'node:assert/strict'
import { timetickAt } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { openEvents, startEventsWorld } from '../../test/events.ts'

async function groupOf(world: Awaited<ReturnType<typeof startEventsWorld>>) {
  const [alice, bob] = [await world.signedIn(), await world.signedIn()]
  const chat = (await alice.post('create_chat', { type: 2, name: 'Team', members: [String(bob.crmId)] })).chat.id
  const send = (content: string) => alice.direct.ok('send_message', { chat_id: chat, content })
  return { alice, bob, chat, send }
}

forEachDialect('a reconnect with since replays the missed messages in order, then live ones', async (t, dialect) => {
  const world = await startEventsWorld(t, dialect)
  const { bob, send } = await groupOf(world)
  const first = openEvents(t, world.gateway.url, bob.cookie)
  await first.opened()
  await send('one')
  await first.until(() => first.contents().length === 1, 'the first message')
  first.close()

  await send('two')
  await send('three')
  const again = openEvents(t, world.gateway.url, bob.cookie, { query: `?since=${first.maxTick()}` })
  await again.until(() => again.contents().length === 2, 'the replay')
  await send('four')
  await again.until(() => again.contents().length === 3, 'the live message')
  assert.deepEqual(again.contents(), ['two', 'three', 'four'])
  const ticks = again.events.map((event) => event.tick)
  assert.deepEqual(
    ticks,
    [...ticks].sort((a, b) => a - b),
    'ticks only grow',
  )
  assert.ok(ticks[0]! > first.maxTick())
})

forEachDialect('Last-Event-ID resumes like since', async (t, dialect) => {
  const world = await startEventsWorld(t, dialect)
  const { bob, send } = await groupOf(world)
  const first = openEvents(t, world.gateway.url, bob.cookie)
  await first.opened()
  await send('one')
  await first.until(() => first.contents().length === 1, 'the first message')
  first.close()
  await send('two')
  const again = openEvents(t, world.gateway.url, bob.cookie, { headers: { 'last-event-id': first.ids[0]! } })
  await again.until(() => again.contents().length === 1, 'the replay')
  // A live message after the replay is the barrier: a repeat of 'one' would come before it.
  await send('three')
  await again.until(() => again.contents().includes('three'), 'the live message after the replay')
  assert.deepEqual(again.contents(), ['two', 'three'])
})

forEachDialect('messages written during the replay arrive once, with no gap at the seam', async (t, dialect) => {
  // Every replay page is held 80 ms at the proxy, so the replay of 30 messages in pages of 5 takes a while.
  const world = await startEventsWorld(t, dialect, { replayDelayMs: 80, settings: { Events: { PageLimit: 5 } } })
  const { bob, send } = await groupOf(world)
  // Bob's other tab keeps the chunk polling at the head, so the reconnect must replay what it missed.
  const tab = openEvents(t, world.gateway.url, bob.cookie)
  await tab.opened()
  await send('start')
  await tab.until(() => tab.contents().length === 1, 'the start message')
  const since = tab.maxTick()
  const backlog = Array.from({ length: 30 }, (_, index) => `backlog ${index + 1}`)
  for (const content of backlog) await send(content)

  const reconnected = openEvents(t, world.gateway.url, bob.cookie, { query: `?since=${since}` })
  const during = Array.from({ length: 20 }, (_, index) => `during ${index + 1}`)
  const committedAt: number[] = []
  for (const content of during) {
    await send(content)
    committedAt.push(Date.now())
    await new Promise((resolve) => setTimeout(resolve, 40))
  }
  // A last message is the barrier: a repeat of any earlier one would come before it.
  await send('last')
  const expected = [...backlog, ...during, 'last']
  await reconnected.until(() => reconnected.contents().includes('last'), 'every message', 20_000)

  assert.deepEqual(reconnected.contents(), expected, 'each message once, in order')
  const ticks = reconnected.events.map((event) => event.tick)
  assert.equal(new Set(ticks).size, ticks.length, 'no tick twice')
  assert.deepEqual(
    ticks,
    [...ticks].sort((a, b) => a - b),
    'ticks only grow',
  )
  // The seam was really crossed: messages were committed both before and after the replay's last page.
  const replayPages = world.proxy.calls.filter((call) => call.wait === 0 && call.subjects.length > 0)
  assert.ok(replayPages.length >= 6, `replayed in pages: ${replayPages.length}`)
  const lastPage = replayPages.at(-1)!.at
  assert.ok(
    committedAt.some((at) => at < lastPage),
    'some messages were committed during the replay',
  )
  assert.ok(
    committedAt.some((at) => at > lastPage),
    'some messages were committed after it',
  )
})

forEachDialect('a since older than the replay window gets a resync, then live events', async (t, dialect) => {
  const world = await startEventsWorld(t, dialect)
  const { bob, send } = await groupOf(world)
  await send('old news')
  const since = timetickAt(Date.now() - 25 * 3600 * 1000)
  const stream = openEvents(t, world.gateway.url, bob.cookie, { query: `?since=${since}` })
  await stream.until(() => stream.resyncs.length === 1, 'the resync')
  await send('fresh')
  await stream.until(() => stream.contents().length === 1, 'the live message')
  assert.equal(stream.resyncs[0]!.reason, 'too-old')
  assert.ok(stream.resyncs[0]!.tick > since, 'the resync tells where the stream continues from')
  assert.ok(stream.resyncs[0]!.tick < stream.events[0]!.tick)
  assert.deepEqual(stream.contents(), ['fresh'], 'nothing older is replayed')
})

forEachDialect('a module that cannot replay gets a resync naming it; the others replay', async (t, dialect) => {
  const world = await startEventsWorld(t, dialect, {
    // Nothing listens on port 9: the wallet is down.
    settings: { Modules: { wallet: 'http://127.0.0.1:9' } },
  })
  const { bob, send } = await groupOf(world)
  const first = openEvents(t, world.gateway.url, bob.cookie)
  await first.opened()
  await send('one')
  await first.until(() => first.contents().length === 1, 'the first message')
  first.close()
  await send('two')
  const again = openEvents(t, world.gateway.url, bob.cookie, { query: `?since=${first.maxTick()}` })
  await again.until(() => again.resyncs.length === 1 && again.contents().length === 1, 'the resync and the replay')
  assert.deepEqual(again.resyncs[0], { reason: 'replay-failed', tick: first.maxTick(), module: 'wallet' })
  assert.deepEqual(again.contents(), ['two'])
})
