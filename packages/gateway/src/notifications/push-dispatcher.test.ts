import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { forEachDialect, metricValue } from '@atrium/platform/testing'
import { openEvents, startEventsWorld, startRecordingProxy, startSecondNode } from '../../test/events.ts'
import { notificationsClient, startPushService, webPushSettings } from '../../test/push-service.ts'

/**
 * A chat module, a gateway with Web Push polling it, a push service on loopback, and named users.
 * Chat operations go to the chat module directly (as the gateway would forward them), so these
 * tests exercise the event pipeline, not the proxy.
 */
async function startPushWorld(t: TestContext, dialect: DatabaseDialect, settings: Record<string, unknown> = {}) {
  const webPush = webPushSettings(settings.WebPush as object)
  const push = await startPushService(t, webPush)
  const world = await startEventsWorld(t, dialect, { settings: { ...settings, WebPush: webPush } })
  const { store } = world.gateway.app

  /** A signed-in user with a display name and a browser subscribed at the push service. */
  async function user(name: string, kind: 'push' | 'gone' | 'flaky' = 'push') {
    const signed = await world.signedIn()
    await store.db.updateTable('users').set({ name }).where('crm_id', '=', signed.crmId).execute()
    const notifications = notificationsClient(world.gateway.url, signed.cookie, signed.csrf)
    const browser = push.subscribe(kind)
    const subscribed = await notifications.subscribe(browser)
    assert.equal(subscribed.status, 200, JSON.stringify(subscribed.body))
    return { ...signed, name, notifications, browser }
  }

  async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs
    while (!(await condition())) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; received ${JSON.stringify(push.received)}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  /** The bodies of the pushes received at a browser, in arrival order. */
  const bodiesAt = (browser: { endpoint: string }) =>
    push.receivedAt(browser.endpoint).map(({ message }) => message.body)
  return { ...world, store, push, webPush, user, until, bodiesAt }
}

forEachDialect(
  'a private message pushes to the recipient a notification that opens the chat with the sender',
  async (t, dialect) => {
    const { push, user, until, bodiesAt } = await startPushWorld(t, dialect)
    const [alice, bob] = [await user('Alice'), await user('Bob')]
    const chat = (await bob.direct.ok('create_chat', { type: 1, peer: String(alice.crmId) })).chat.id

    await bob.direct.ok('send_message', { chat_id: chat, content: 'Hi Alice, are you free at noon?' })
    await until(() => push.receivedAt(alice.browser.endpoint).length === 1, 'Bob’s message at Alice’s browser')
    const [toAlice] = push.receivedAt(alice.browser.endpoint)
    assert.deepEqual(
      { ...toAlice!.message, tick: undefined },
      {
        title: 'Bob',
        body: 'Hi Alice, are you free at noon?',
        url: `/chat/c/${bob.crmId}`,
        tag: `chat-${chat}`,
        module: 'chat',
        type: 'NewChatMessage',
        tick: undefined,
      },
    )
    assert.notEqual(toAlice!.message.url, `/chat/c/${alice.crmId}`, 'never the recipient’s own id')
    assert.equal(typeof toAlice!.message.tick, 'number')

    await alice.direct.ok('send_message', { chat_id: chat, content: 'Yes!' })
    await until(() => push.receivedAt(bob.browser.endpoint).length === 1, 'Alice’s reply at Bob’s browser')
    assert.equal(push.receivedAt(bob.browser.endpoint)[0]!.message.url, `/chat/c/${alice.crmId}`)
    assert.equal(push.receivedAt(bob.browser.endpoint)[0]!.message.body, 'Yes!')
    // Each user's events are pushed in order: a later one at the same browser is the barrier.
    // Alice's reply reached Bob after Bob's own message; Bob's next message reaches Alice after her reply.
    await bob.direct.ok('send_message', { chat_id: chat, content: 'Great, see you' })
    await until(() => bodiesAt(alice.browser).includes('Great, see you'), 'Bob’s next message at Alice’s browser')
    assert.deepEqual(
      bodiesAt(alice.browser),
      ['Hi Alice, are you free at noon?', 'Great, see you'],
      'Alice’s own reply is not pushed to her',
    )
    assert.deepEqual(bodiesAt(bob.browser), ['Yes!'], 'Bob’s own message is not pushed to him')
    assert.deepEqual(push.refused, [])
  },
)

forEachDialect('a group message opens the group, and nobody outside it is pushed', async (t, dialect) => {
  const { push, user, until, bodiesAt } = await startPushWorld(t, dialect)
  const [alice, bob, carol] = [await user('Alice'), await user('Bob'), await user('Carol')]
  const group = (await carol.direct.ok('create_chat', { type: 2, name: 'Launch', members: [String(alice.crmId)] })).chat
    .id

  await carol.direct.ok('send_message', { chat_id: group, content: 'Launch moved to Friday' })
  await until(() => push.receivedAt(alice.browser.endpoint).length === 1, 'Carol’s group message at Alice’s browser')
  const { message } = push.receivedAt(alice.browser.endpoint)[0]!
  assert.equal(message.url, `/chat/c/${group}`)
  assert.equal(message.title, 'Launch')
  assert.equal(message.body, 'Carol: Launch moved to Friday')
  // Later messages are the barriers, as each user's events are pushed in order: one to Bob, committed
  // after the group message, and Alice's answer in the group to Carol.
  const direct = (await carol.direct.ok('create_chat', { type: 1, peer: String(bob.crmId) })).chat.id
  await carol.direct.ok('send_message', { chat_id: direct, content: 'Are you coming on Friday?' })
  await alice.direct.ok('send_message', { chat_id: group, content: 'Friday works' })
  await until(() => bodiesAt(bob.browser).length > 0, 'Carol’s private message at Bob’s browser')
  await until(() => bodiesAt(carol.browser).length > 0, 'Alice’s answer at Carol’s browser')
  assert.deepEqual(bodiesAt(bob.browser), ['Are you coming on Friday?'], 'Bob is not in the group and receives nothing')
  assert.deepEqual(bodiesAt(carol.browser), ['Alice: Friday works'], 'the sender receives nothing')
})

forEachDialect('a member who left a group is no longer pushed its messages', async (t, dialect) => {
  const { user, until, bodiesAt } = await startPushWorld(t, dialect)
  const [alice, bob] = [await user('Alice'), await user('Bob')]
  const group = (await alice.direct.ok('create_chat', { type: 2, name: 'Book club', members: [String(bob.crmId)] }))
    .chat.id
  await alice.direct.ok('send_message', { chat_id: group, content: 'Chapter one by Monday' })
  await until(() => bodiesAt(bob.browser).length === 1, 'the first group message at Bob’s browser')

  await bob.direct.ok('leave_chat', { chat_id: group })
  await alice.direct.ok('send_message', { chat_id: group, content: 'Chapter two by Friday' })
  // The barrier: a private message committed after the group message reaches Bob, in order.
  const direct = (await alice.direct.ok('create_chat', { type: 1, peer: String(bob.crmId) })).chat.id
  await alice.direct.ok('send_message', { chat_id: direct, content: 'Sorry to see you go' })
  await until(() => bodiesAt(bob.browser).includes('Sorry to see you go'), 'the private message at Bob’s browser')
  assert.deepEqual(bodiesAt(bob.browser), ['Alice: Chapter one by Monday', 'Sorry to see you go'])
})

forEachDialect('a member who muted a group is not pushed its messages until they unmute it', async (t, dialect) => {
  const { user, until, bodiesAt } = await startPushWorld(t, dialect)
  const [alice, bob] = [await user('Alice'), await user('Bob')]
  const group = (await alice.direct.ok('create_chat', { type: 2, name: 'Chatter', members: [String(bob.crmId)] })).chat
    .id
  await bob.direct.ok('update_member', { chat_id: group, muted: true })
  await alice.direct.ok('send_message', { chat_id: group, content: 'Anyone for lunch?' })
  // The barrier: a private message committed after the group message reaches Bob, in order.
  const direct = (await alice.direct.ok('create_chat', { type: 1, peer: String(bob.crmId) })).chat.id
  await alice.direct.ok('send_message', { chat_id: direct, content: 'Lunch?' })
  await until(() => bodiesAt(bob.browser).includes('Lunch?'), 'the private message at Bob’s browser')

  await bob.direct.ok('update_member', { chat_id: group, muted: false })
  await alice.direct.ok('send_message', { chat_id: group, content: 'Lunch at noon' })
  await until(() => bodiesAt(bob.browser).length === 2, 'the group message after unmuting at Bob’s browser')
  assert.deepEqual(bodiesAt(bob.browser), ['Lunch?', 'Alice: Lunch at noon'])
})

forEachDialect('with PushSending off the event arrives on SSE but no push is sent', async (t, dialect) => {
  const world = await startPushWorld(t, dialect, { PushSending: false })
  const { gateway, push, user, until, bodiesAt } = world
  const [alice, bob] = [await user('Alice'), await user('Bob')]
  const stream = openEvents(t, gateway.url, alice.cookie)
  await stream.opened()
  const chat = (await bob.direct.ok('create_chat', { type: 1, peer: String(alice.crmId) })).chat.id
  await bob.direct.ok('send_message', { chat_id: chat, content: 'Only on SSE' })
  await stream.until(() => stream.contents().includes('Only on SSE'), 'the message on Alice’s stream')
  // Nothing this node does follows push work, so the barrier is a node with PushSending on the same
  // database, started after the message: before it watches Alice and pushes a later message, this
  // node would long have pushed the first one.
  const polls = await startRecordingProxy(t, world.chat.base)
  const sending = await startSecondNode(t, world, { WebPush: world.webPush, Modules: { chat: polls.url } })
  await until(
    () => polls.calls.some((call) => call.subjects.includes(`user:${alice.crmId}`)),
    'the sending node polling Alice’s events',
  )
  await bob.direct.ok('send_message', { chat_id: chat, content: 'From the sending node' })
  await until(() => bodiesAt(alice.browser).length > 0, 'the later message at Alice’s browser')
  await sending.stop()
  assert.deepEqual(bodiesAt(alice.browser), ['From the sending node'], 'this node pushed nothing')
  assert.equal(push.requests.length, 1)
})

forEachDialect(
  'a failing push service is tried MaxAttempts times; a gone subscription is removed; each outcome is counted',
  async (t, dialect) => {
    const { gateway, push, store, user, until } = await startPushWorld(t, dialect, { WebPush: { MaxAttempts: 3 } })
    const alice = await user('Alice')
    const [flaky, gone] = [push.subscribe('flaky'), push.subscribe('gone')]
    for (const browser of [flaky, gone]) assert.equal((await alice.notifications.subscribe(browser)).status, 200)
    const bob = await user('Bob')
    const chat = (await bob.direct.ok('create_chat', { type: 1, peer: String(alice.crmId) })).chat.id

    await bob.direct.ok('send_message', { chat_id: chat, content: 'Are you there?' })
    await until(() => push.receivedAt(alice.browser.endpoint).length === 1, 'the push at Alice’s working browser')
    const rowsOfAlice = () =>
      store.db.selectFrom('push_subscriptions').selectAll().where('crm_id', '=', alice.crmId).execute()
    // The failure is recorded only after the last try, when no further try is due; the success at
    // the working browser is recorded after its answer, which may come after the push arrived.
    await until(async () => {
      const rows = await rowsOfAlice()
      const failed = rows.some((row) => row.endpoint === flaky.endpoint && row.failures > 0)
      const succeeded = rows.some((row) => row.endpoint === alice.browser.endpoint && row.last_success > 0)
      return failed && succeeded && rows.every((row) => row.endpoint !== gone.endpoint)
    }, 'the failure recorded after the last try, the success recorded, and the gone subscription removed')
    assert.equal(push.requestsTo(flaky.endpoint), 3, 'three tries, no fourth')
    assert.equal(push.requestsTo(gone.endpoint), 1)
    const metrics = await gateway.app.metrics.registry.metrics()
    const outcomes = (outcome: string) => metricValue(metrics, 'atrium_push_outcomes_total', { outcome })
    assert.deepEqual([outcomes('sent'), outcomes('gone'), outcomes('failed')], [1, 1, 1])
    assert.equal(metricValue(metrics, 'atrium_push_queue'), 0, 'nothing left waiting')

    const rows = await rowsOfAlice()
    const byEndpoint = new Map(rows.map((row) => [row.endpoint, row]))
    assert.equal(byEndpoint.has(gone.endpoint), false, 'the gone subscription was removed')
    assert.equal(byEndpoint.get(flaky.endpoint)?.failures, 1)
    assert.match(byEndpoint.get(flaky.endpoint)?.last_error ?? '', /503/)
    assert.equal(byEndpoint.get(alice.browser.endpoint)?.failures, 0)
    assert.ok((byEndpoint.get(alice.browser.endpoint)?.last_success ?? 0) > 0)
  },
)

forEachDialect('a subscription stored by another gateway node is picked up by the sending node', async (t, dialect) => {
  const { push, proxy, store, signedIn, user, until } = await startPushWorld(t, dialect, {
    WebPush: { RefreshSeconds: 1 },
  })
  const alice = await signedIn()
  const browser = push.subscribe()
  // What a node without PushSending does on subscribe: it only stores the row.
  await store.db
    .insertInto('push_subscriptions')
    .values({
      id: store.nextTick(),
      crm_id: alice.crmId,
      endpoint: browser.endpoint,
      p256dh: browser.keys.p256dh,
      auth: browser.keys.auth,
      user_agent: 'another node',
      created: Date.now(),
      last_success: 0,
      failures: 0,
      last_error: '',
    })
    .execute()
  await until(
    () => proxy.calls.some((call) => call.subjects.includes(`user:${alice.crmId}`)),
    'the sending node polling Alice’s events',
  )
  const bob = await user('Bob')
  const chat = (await bob.direct.ok('create_chat', { type: 1, peer: String(alice.crmId) })).chat.id
  await bob.direct.ok('send_message', { chat_id: chat, content: 'Picked up' })
  await until(() => push.receivedAt(browser.endpoint).length === 1, 'the push at Alice’s browser')
  assert.equal(push.receivedAt(browser.endpoint)[0]!.message.url, `/chat/c/${bob.crmId}`)
})
