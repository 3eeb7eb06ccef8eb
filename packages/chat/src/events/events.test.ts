import assert from 'node:assert/strict'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { type TestContext, test } from 'node:test'
import type { DatabaseDialect, EventBatch } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, listen, onlyWithPostgres, until } from '@atrium/platform/testing'
import {
  type ChatClient,
  createChatClient,
  createGroup,
  SERVICE_SECRET,
  startChat,
  startChatOn,
} from '../../test/support.ts'
import { buildChat } from '../app.ts'
import { loadChatConfig } from '../config.ts'
import { serializeEnvelope } from './events.plugin.ts'

/**
 * Watches the timers armed in this process: `parked(waitMs)` resolves once a long-poll of that wait
 * is parked, which the events handler does by arming a timer for the rest of its wait after a read
 * found nothing. Tests thereby act on a waiting long-poll without guessing how long it takes to park.
 */
function watchLongPolls(t: TestContext) {
  const timers = t.mock.method(globalThis, 'setTimeout')
  return (waitMs: number) =>
    until(
      () =>
        timers.mock.calls.some((call) => {
          const ms = Number(call.arguments[1])
          return ms > waitMs - 1000 && ms <= waitMs
        }),
      `a long-poll of ${waitMs} ms to park`,
    )
}

async function readAll(chat: ChatClient, query: Record<string, string | number> = {}) {
  const { status, result, error } = await chat.events({ limit: 1000, ...query })
  assert.equal(status, 200, JSON.stringify(error))
  return result as EventBatch
}

forEachDialect(
  'a member receives NewChatMessage with typed data; a non-member receives nothing',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 3, 5)
    const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
    const sent = await chat.user(1).ok('send_message', { chat_id: direct.id, content: 'hi Bob' })
    const forBob = await readAll(chat, { subjects: 'user:2' })
    const message = forBob.Events.find((event) => event.EventType === 'NewChatMessage')!
    assert.equal(message.CrmId, 2)
    assert.equal(message.AppId, 0)
    assert.equal(typeof message.Timetick, 'number')
    assert.equal(message.TickUpdate, forBob.LastTick)
    assert.deepEqual(
      { ...message.Data, time: undefined },
      {
        message_id: sent.id,
        chat_id: direct.id,
        sender: '1',
        content: 'hi Bob',
        flags: 0,
        link_kind: 'none',
        linked_message_id: '0',
        time: undefined,
        tick: String(message.TickUpdate),
      },
    )
    assert.deepEqual(
      forBob.Events.map((event) => event.EventType),
      ['ChatCreated', 'NewChatMessage'],
    )
    const forCarol = await readAll(chat, { subjects: 'user:3' })
    assert.deepEqual(forCarol.Events, [])
    assert.equal(forCarol.LastTick, forBob.LastTick, 'the cursor still moves past events for others')
  },
)

forEachDialect('the legacy users alias selects the same events as user: subjects', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 5)
  const groupId = await createGroup(chat.user(1), [2, 3])
  await chat.user(1).ok('send_message', { chat_id: groupId, content: 'all hands' })
  const bySubjects = await readAll(chat, { subjects: 'user:2,user:3' })
  const byAlias = await readAll(chat, { users: '2,3' })
  assert.deepEqual(byAlias, bySubjects)
  assert.deepEqual(new Set(byAlias.Events.map((event) => event.CrmId)), new Set([2, 3]))
})

forEachDialect('since and limit page through the feed without gaps or repeats', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 5)
  const groupId = await createGroup(chat.user(1), [2])
  for (let i = 0; i < 12; i++) await chat.user(1).ok('send_message', { chat_id: groupId, content: `n${i}` })
  const seen: string[] = []
  let since = 0
  for (let round = 0; round < 10; round++) {
    const batch = await readAll(chat, { subjects: 'user:2', since, limit: 5 })
    seen.push(...batch.Events.filter((e) => e.EventType === 'NewChatMessage').map((e) => String(e.Data.content)))
    if (batch.LastTick === since) break
    since = batch.LastTick
  }
  assert.deepEqual(
    seen,
    Array.from({ length: 12 }, (_, i) => `n${i}`),
  )
})

forEachDialect('limit bounds the events returned, in whole stored events', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 5)
  const groupId = await createGroup(chat.user(1), [2, 3])
  for (let i = 0; i < 4; i++) await chat.user(1).ok('send_message', { chat_id: groupId, content: `n${i}` })
  const all = await readAll(chat)
  const perMessage = all.Events.filter((event) => event.EventType === 'NewChatMessage').length / 4
  assert.equal(perMessage, 3, 'without subjects, a group message is one event per member')

  for (const limit of [4, 2]) {
    const pages: EventBatch[] = []
    let since = 0
    for (let round = 0; round < 50; round++) {
      const batch = await readAll(chat, { since, limit })
      if (batch.Events.length === 0) break
      pages.push(batch)
      since = batch.LastTick
    }
    assert.deepEqual(
      pages.flatMap((page) => page.Events),
      all.Events,
      `limit ${limit}: every event once, in order`,
    )
    for (const page of pages) {
      const ticks = new Set(page.Events.map((event) => event.TickUpdate))
      // A stored event's items share its tick: a page ends after one, and holds one whole even past the limit.
      assert.equal(page.LastTick, page.Events.at(-1)!.TickUpdate)
      assert.ok(page.Events.length <= limit || ticks.size === 1, `limit ${limit}: ${page.Events.length} events`)
      for (const tick of ticks) {
        const whole = all.Events.filter((event) => event.TickUpdate === tick).length
        assert.equal(page.Events.filter((event) => event.TickUpdate === tick).length, whole, 'never split')
      }
    }
  }
})

forEachDialect('limit has a documented upper bound and subjects are validated', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 5)
  assert.equal((await chat.events({ limit: 1001 })).error?.code, 1000)
  assert.equal((await chat.events({ limit: 0 })).status, 400)
  for (const subjects of ['user:x', 'team:1', 'user:', 'user:-1', 'user:1;drop']) {
    const response = await chat.events({ subjects })
    assert.equal(response.status, 400, subjects)
    assert.equal(response.error?.code, 1000)
  }
})

forEachDialect('wait long-polls until an event is committed', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 5)
  const groupId = await createGroup(chat.user(1), [2])
  const { LastTick } = await readAll(chat, { subjects: 'user:2' })
  const parked = watchLongPolls(t)
  const polling = chat.events({ subjects: 'user:2', since: LastTick, wait: 5000 })
  await parked(5000)
  const sent = Date.now()
  await chat.user(1).ok('send_message', { chat_id: groupId, content: 'ping' })
  const { result } = await polling
  assert.equal(result.Events[0].Data.content, 'ping')
  assert.ok(Date.now() - sent < 2000, 'answered on commit, not at the end of the wait')
})

forEachDialect('a removed member is told so and receives nothing after', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 5)
  const groupId = await createGroup(chat.user(1), [2])
  await chat.user(1).ok('remove_member', { chat_id: groupId, member: '2' })
  const { LastTick, Events } = await readAll(chat, { subjects: 'user:2' })
  assert.ok(Events.some((event) => event.EventType === 'MemberRemoved' && event.Data.member === '2'))
  await chat.user(1).ok('send_message', { chat_id: groupId, content: 'secret plans' })
  assert.deepEqual((await readAll(chat, { subjects: 'user:2', since: LastTick })).Events, [])
})

forEachDialect('a message to a large channel is one event row, addressed at read time', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 5)
  const members = Array.from({ length: 1000 }, (_, i) => 10_000 + i)
  await chat.register(...members)
  const channel = await createGroup(chat.user(1), members, 4, 'Announcements')
  const { LastTick } = await readAll(chat)
  await chat.user(1).ok('send_message', { chat_id: channel, content: 'to everyone' })
  const all = await readAll(chat, { since: LastTick })
  assert.equal(new Set(all.Events.map((event) => event.Timetick)).size, 1, 'one event')
  assert.equal(all.Events.length, 1001, 'expanded to every member when read')
  const one = await readAll(chat, { since: LastTick, subjects: 'user:10500' })
  assert.deepEqual(
    one.Events.map((event) => event.CrmId),
    [10500],
  )
})

forEachDialect('a member who joins later does not receive earlier events', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 5)
  const groupId = await createGroup(chat.user(1), [])
  await chat.user(1).ok('send_message', { chat_id: groupId, content: 'before you came' })
  await chat.user(1).ok('add_chat_member', { chat_id: groupId, member: '5' })
  const events = (await readAll(chat, { subjects: 'user:5' })).Events.map((event) => event.EventType)
  assert.deepEqual(events, ['MemberAdded'])
})

// The cursor must never skip an event that commits late. Writers on two instances against one
// PostgreSQL database commit in parallel while a reader follows the cursor; every message must
// arrive exactly once.
test(
  'a cursor reader misses nothing while writers on two instances commit concurrently (postgres)',
  onlyWithPostgres(),
  async (t) => {
    const url = await createTestDatabaseUrl(t, 'postgres')
    const first = await startChatOn(t, url, { NodeNumber: 1 })
    await first.register(1, 2, 3, 5)
    const second = await startChatOn(t, url, { NodeNumber: 2 })
    await second.register(1, 2, 3, 5)
    const groupId = await createGroup(first.user(1), [2])
    const { LastTick: start } = await readAll(first, { subjects: 'user:2' })

    const sent = new Set<string>()
    let writing = true
    const writers = [first, second, first, second].map(async (instance, writer) => {
      for (let i = 0; i < 40; i++) {
        const message = await instance.user(1).ok('send_message', { chat_id: groupId, content: `w${writer}-${i}` })
        sent.add(message.id)
      }
    })
    const received: string[] = []
    const reader = (async () => {
      let since = start
      while (writing || received.length < sent.size) {
        const batch = await readAll(second, { subjects: 'user:2', since, limit: 7, wait: 200 })
        received.push(...batch.Events.map((event) => String(event.Data.message_id)))
        since = batch.LastTick
        if (!writing && batch.Events.length === 0) break
      }
    })()
    await Promise.all(writers)
    writing = false
    await reader
    assert.equal(sent.size, 160)
    assert.equal(received.length, new Set(received).size, 'no event twice')
    assert.deepEqual(new Set(received), sent, 'every event once')
  },
)

forEachDialect('an app subject receives its chats’ events once, with no member items', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 5)
  const created = await chat.call(
    'POST',
    '/msg/v1/create_chat',
    { 'X-Crm': '1', 'X-AppId': '7' },
    { type: 2, name: 'Bot', members: ['2'] },
  )
  assert.equal(created.status, 200)
  await chat.user(2).ok('send_message', { chat_id: created.result.chat.id, content: 'hello bot' })
  await createGroup(chat.user(1), [2])
  const { Events } = await readAll(chat, { subjects: 'app:7' })
  assert.deepEqual(
    Events.map((event) => [event.EventType, event.CrmId, event.AppId]),
    [
      ['ChatCreated', 0, 7],
      ['NewChatMessage', 0, 7],
    ],
  )
  assert.deepEqual((await readAll(chat, { subjects: 'app:8' })).Events, [])
})

/** A chat module whose error log the test reads, and its client. */
async function startLoggedChat(t: TestContext, dialect: DatabaseDialect) {
  const errors: string[] = []
  const config = loadChatConfig({ ChatDB: await createTestDatabaseUrl(t, dialect), ServiceSecret: SERVICE_SECRET }, {})
  const app = await buildChat(config, { logger: { level: 'error', stream: { write: (line) => errors.push(line) } } })
  const chat = createChatClient(await listen(t, app))
  const { result: head } = await chat.events({ limit: 1 })
  return { app, chat, errors, since: head.LastTick }
}

forEachDialect('a stopping module answers its waiting long-polls at once, with an empty batch', async (t, dialect) => {
  const { app, chat, errors, since } = await startLoggedChat(t, dialect)
  const parked = watchLongPolls(t)
  const poll = chat.events({ since, limit: 10, wait: 30_000 })
  await parked(30_000)
  const closed = app.close()
  // The guard timer is cleared once the race is decided, so it does not hold the test file open for 20 s.
  let guard: NodeJS.Timeout | undefined
  const answer = await Promise.race([
    poll,
    new Promise((resolve) => {
      guard = setTimeout(resolve, 20_000, 'still waiting')
    }),
  ])
  clearTimeout(guard)
  assert.notEqual(answer, 'still waiting', 'the long-poll was answered without waiting out its 30 s')
  const { status, result } = answer as Awaited<typeof poll>
  assert.equal(status, 200)
  assert.deepEqual(result.Events, [], 'an empty batch: the poller asks again')
  await closed
  assert.deepEqual(errors, [])
})

forEachDialect('a long-poll cut by a crash-like stop runs no query on the closed database', async (t, dialect) => {
  const { app, chat, errors, since } = await startLoggedChat(t, dialect)
  const parked = watchLongPolls(t)
  // Fastify reports on this channel when a handler's promise has settled and its answer or error was handled.
  let finished = 0
  const asyncEnd = () => finished++
  subscribe('tracing:fastify.request.handler:asyncEnd', asyncEnd)
  t.after(() => unsubscribe('tracing:fastify.request.handler:asyncEnd', asyncEnd))
  const poll = chat.events({ since, limit: 10, wait: 30_000 })
  await parked(30_000)
  // Expected before the close is awaited: the poll fails as soon as its connection is cut.
  const cut = assert.rejects(poll, 'the connection was cut')
  app.server.closeAllConnections()
  await app.close()
  await cut
  // A query after the wake-up would fail on the closed database and log "driver has already been destroyed".
  await until(() => finished > 0, 'the long-poll handler to finish')
  assert.deepEqual(errors, [])
})

test('an answer is the exact JSON of its batch, with shared event data, non-ASCII text and an empty batch', () => {
  const data = { content: 'héllo "你好" 🎉\\n', chat_id: '5' }
  const shared = JSON.stringify(data)
  const other = JSON.stringify({ content: 'ok' })
  const item = (CrmId: number, AppId: number, tick: number, DataJson: string) => ({
    CrmId,
    AppId,
    Timetick: tick - 1,
    TickUpdate: tick,
    EventType: 'NewChatMessage',
    DataJson,
  })
  const items = [
    item(1001, 0, 90, shared),
    item(1002, 0, 90, shared),
    item(0, 77, 90, shared),
    item(1001, 0, 91, other),
    item(1002, 77, 91, other),
  ]
  const bytes = serializeEnvelope({ result: { Events: items, LastTick: 91 }, id: 'req-ü' })
  const expected = {
    result: {
      Events: items.map(({ DataJson, ...rest }) => ({ ...rest, Data: JSON.parse(DataJson) })),
      LastTick: 91,
    },
    id: 'req-ü',
  }
  assert.equal(bytes.toString('utf8'), JSON.stringify(expected))
  const empty = serializeEnvelope({ result: { Events: [], LastTick: 4 }, id: 'x' })
  assert.equal(empty.toString('utf8'), '{"result":{"Events":[],"LastTick":4},"id":"x"}')
})
