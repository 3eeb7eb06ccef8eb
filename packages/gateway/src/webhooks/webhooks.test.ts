import assert from 'node:assert/strict'
import { forEachDialect, until } from '@atrium/platform/testing'
import { startSecondNode } from '../../test/events.ts'
import { FAST_WEBHOOKS, startWebhookReceiver, startWebhookWorld, verifySignature } from '../../test/webhooks.ts'

forEachDialect('an app receives its events signed with its secret, and never another app’s', async (t, dialect) => {
  const world = await startWebhookWorld(t, dialect)
  const [shopHook, otherHook] = [await startWebhookReceiver(t), await startWebhookReceiver(t)]
  const shop = await world.appWith(shopHook.url)
  const other = await world.appWith(otherHook.url, ['NewChatMessage', 'ChatCreated'])
  const sent = await shop.send('order 1 paid')
  await other.send('for the other app')
  await shop.send('order 2 paid')

  await until(() => shopHook.contents().length === 2, 'both messages at the shop')
  await until(() => otherHook.contents().length === 1, 'the message at the other app')
  for (const request of shopHook.requests) {
    assert.ok(verifySignature(shop.app.webhook_secret, request.raw, request.signature), 'a valid X-Signature')
    assert.ok(!verifySignature(other.app.webhook_secret, request.raw, request.signature), 'keyed with this app only')
    assert.match(request.deliveryId, /^[1-9][0-9]*$/)
  }
  const [first] = shopHook.requests[0]!.payload.events
  assert.deepEqual(Object.keys(first!).sort(), ['app_id', 'data', 'module', 'tick', 'type'])
  assert.equal(first!.module, 'chat')
  assert.equal(first!.type, 'NewChatMessage')
  assert.equal(first!.app_id, shop.app.id)
  assert.equal(first!.data.message_id, sent.id)
  assert.equal(first!.data.chat_id, shop.chatId)
  assert.equal(String(first!.tick), first!.data.tick)
  assert.deepEqual(shopHook.contents(), ['order 1 paid', 'order 2 paid'])
  // The shop enabled NewChatMessage only; the other app also gets ChatCreated of its chat.
  const shopTypes = shopHook.requests.flatMap((request) => request.payload.events.map((event) => event.type))
  assert.deepEqual([...new Set(shopTypes)], ['NewChatMessage'])
  const otherEvents = otherHook.requests.flatMap((request) => request.payload.events)
  assert.deepEqual(
    otherEvents.map((event) => event.type),
    ['ChatCreated', 'NewChatMessage'],
  )
  assert.ok(otherEvents.every((event) => event.app_id === other.app.id))
  assert.ok(!JSON.stringify(shopHook.requests.map((request) => request.payload)).includes('for the other app'))
  assert.ok(!JSON.stringify(otherHook.requests.map((request) => request.payload)).includes('order'))
})

forEachDialect('a failing or closed receiver gets the same delivery again until it accepts it', async (t, dialect) => {
  const world = await startWebhookWorld(t, dialect)
  const hook = await startWebhookReceiver(t)
  const shop = await world.appWith(hook.url)

  hook.answer(500)
  await shop.send('while failing')
  await until(() => hook.requests.length >= 3, 'three failed attempts')
  hook.answer(200)
  await until(() => hook.accepted().length === 1, 'the delivery to be accepted')
  const ids = new Set(hook.requests.map((request) => request.deliveryId))
  assert.equal(ids.size, 1, 'one delivery id for every attempt')
  assert.deepEqual(
    hook.requests.map((request) => request.attempt),
    hook.requests.map((_, index) => index + 1),
  )
  assert.equal(new Set(hook.requests.map((request) => request.raw.toString())).size, 1, 'the same body each time')
  assert.ok(hook.requests.every((request) => verifySignature(shop.app.webhook_secret, request.raw, request.signature)))

  await hook.stop()
  await shop.send('while down')
  await until(async () => {
    const pending = await world.deliveries().nextPending(shop.app.id, 'chat')
    return (pending?.attempts ?? 0) >= 2
  }, 'failed attempts against the closed port')
  const pending = await world.deliveries().nextPending(shop.app.id, 'chat')
  assert.match(pending!.last_error, /no connection: .*ECONNREFUSED/)
  await hook.start()
  await until(() => hook.accepted().length === 2, 'the delivery once the receiver is back')
  const last = hook.accepted()[1]!
  assert.equal(last.deliveryId, String(pending!.id), 'the delivery id stays the same across the outage')
  assert.ok(last.attempt > pending!.attempts)
  assert.deepEqual(hook.contents(), ['while failing', 'while down'])
  await until(async () => !(await world.deliveries().nextPending(shop.app.id, 'chat')), 'nothing left pending')
})

forEachDialect(
  'after the last attempt a delivery is a dead letter that the CLI lists and replays',
  async (t, dialect) => {
    const world = await startWebhookWorld(t, dialect, { webhooks: { MaxAttempts: 3 } })
    const hook = await startWebhookReceiver(t)
    const shop = await world.appWith(hook.url)
    hook.answer(500)
    await shop.send('lost for now')
    await until(async () => (await world.deliveries().deadLetters({ limit: 10 })).length === 1, 'the dead letter')
    assert.equal(hook.requests.length, 3, 'exactly MaxAttempts attempts')

    const listed = await world.atrium('webhooks', 'dead-letters', '--json')
    assert.equal(listed.code, 0, listed.stderr)
    const [letter] = JSON.parse(listed.stdout).deadLetters
    assert.equal(letter.appId, String(shop.app.id))
    assert.equal(letter.id, hook.requests[0]!.deliveryId)
    assert.equal(letter.attempts, 3)
    assert.equal(letter.lastStatus, 500)
    assert.match(letter.lastError, /answered 500: receiver failure/)
    assert.equal(letter.events, 1)

    // The lane goes on after a dead letter: later events are delivered.
    hook.answer(200)
    await shop.send('next one')
    await until(() => hook.contents().includes('next one'), 'the next message')

    const replayed = await world.atrium('webhooks', 'replay', letter.id)
    assert.equal(replayed.code, 0, replayed.stderr)
    assert.match(replayed.stdout, new RegExp(`Delivered ${letter.id} \\(1 event\\) to ${hook.url}: 200`))
    const redelivered = hook.accepted().find((request) => request.deliveryId === letter.id)
    assert.ok(redelivered, 'the replay carries the same delivery id')
    assert.equal(redelivered.raw.toString(), hook.requests[0]!.raw.toString(), 'and the same body')
    assert.equal(redelivered.attempt, 4)
    assert.ok(verifySignature(shop.app.webhook_secret, redelivered.raw, redelivered.signature))
    assert.deepEqual(hook.contents().sort(), ['lost for now', 'next one'])
    const after = await world.atrium('webhooks', 'dead-letters', '--json')
    assert.deepEqual(JSON.parse(after.stdout).deadLetters, [])
    const again = await world.atrium('webhooks', 'replay', letter.id)
    assert.equal(again.code, 2)
    assert.match(again.stderr, /no dead letter/)
  },
)

forEachDialect('a restarted gateway resumes the pending delivery and the events it missed', async (t, dialect) => {
  const world = await startWebhookWorld(t, dialect)
  const hook = await startWebhookReceiver(t)
  const shop = await world.appWith(hook.url)
  hook.answer(503)
  await shop.send('before the restart')
  await until(() => hook.requests.length >= 2, 'failed attempts')
  await world.gateway.stop()
  const failedId = hook.requests[0]!.deliveryId
  await shop.send('while the gateway is down')
  hook.answer(200)
  await world.gateway.start()
  await until(() => hook.contents().length === 2, 'both messages after the restart')
  assert.deepEqual(hook.contents(), ['before the restart', 'while the gateway is down'])
  assert.equal(hook.accepted()[0]!.deliveryId, failedId, 'the delivery id survives the restart')
})

forEachDialect('by default a loopback callback is refused, dead-lettered and never contacted', async (t, dialect) => {
  const world = await startWebhookWorld(t, dialect, { webhooks: { AllowPrivateAddresses: false } })
  const hook = await startWebhookReceiver(t)
  const shop = await world.appWith(hook.url)
  await shop.send('to a loopback receiver')
  await until(async () => (await world.deliveries().deadLetters({ limit: 10 })).length === 1, 'the dead letter')
  const [letter] = await world.deliveries().deadLetters({ limit: 10 })
  assert.equal(letter!.attempts, 1, 'a refused address is not retried')
  assert.equal(letter!.last_status, 0)
  assert.match(
    letter!.last_error,
    /127\.0\.0\.1, a loopback address; refused \(Webhooks\.AllowPrivateAddresses is off\)/,
  )
  const replay = await world.atrium('webhooks', 'replay', String(letter!.id))
  assert.equal(replay.code, 2)
  assert.match(replay.stderr, /loopback address; refused/)
  assert.equal(hook.requests.length, 0, 'the receiver was never contacted')
})

forEachDialect('a gateway without PushSending sends no webhooks', async (t, dialect) => {
  const world = await startWebhookWorld(t, dialect, { settings: { PushSending: false } })
  const hook = await startWebhookReceiver(t)
  const shop = await world.appWith(hook.url)
  await shop.send('not from this node')
  // Nothing this node does follows webhook work, so the barrier is a node with PushSending on the
  // same database, started after the message: before it has read the app and delivered both
  // messages, this node would long have polled the module for the app (Webhooks.ReloadMs is 100 ms).
  const sending = await startSecondNode(t, world, { Webhooks: FAST_WEBHOOKS })
  await shop.send('from the sending node')
  await until(() => hook.contents().includes('from the sending node'), 'the later message from the sending node')
  await sending.stop()
  assert.deepEqual(hook.contents(), ['not from this node', 'from the sending node'], 'each once, in order')
  assert.ok(
    world.proxy.calls.every((call) => !call.subjects.includes(`app:${shop.app.id}`)),
    'this node never polled the module for the app',
  )
})
