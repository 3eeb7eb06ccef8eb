import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { notificationsClient, startPushService, webPushSettings } from '../../test/push-service.ts'
import { signedInUser, startGateway } from '../../test/support.ts'

/** A gateway with Web Push on, a push service on loopback, and a way to sign users in. */
async function startWorld(t: TestContext, dialect: DatabaseDialect, settings: Record<string, unknown> = {}) {
  const webPush = webPushSettings(settings.WebPush as object)
  const push = await startPushService(t, webPush)
  const gateway = await startGateway(t, dialect, { settings: { ...settings, WebPush: webPush } })
  async function signedIn() {
    const { crmId, headers } = await signedInUser(gateway)
    return {
      crmId,
      cookie: headers.Cookie,
      ...notificationsClient(gateway.url, headers.Cookie, headers['X-CSRF-Token']),
    }
  }
  const subscriptionsOf = async (crmId: number) =>
    (await gateway.app.store.db.selectFrom('push_subscriptions').selectAll().where('crm_id', '=', crmId).execute())
      .map((row) => row.endpoint)
      .sort()
  return { ...gateway, webPush, push, signedIn, subscriptionsOf }
}

forEachDialect(
  'a browser subscribes with the VAPID key, and a test push reaches it signed and encrypted',
  async (t, dialect) => {
    const { webPush, push, signedIn, subscriptionsOf } = await startWorld(t, dialect)
    const alice = await signedIn()
    const key = await alice.publicKey()
    assert.equal(key.status, 200, JSON.stringify(key.body))
    assert.equal(key.body.result.publicKey, webPush.PublicKey)

    const browser = push.subscribe()
    const subscribed = await alice.subscribe(browser)
    assert.equal(subscribed.status, 200, JSON.stringify(subscribed.body))
    assert.equal(subscribed.body.result.subscription.endpoint, browser.endpoint)
    assert.match(subscribed.body.result.subscription.id, /^[1-9][0-9]*$/)
    assert.deepEqual(await subscriptionsOf(alice.crmId), [browser.endpoint])

    const tested = await alice.test()
    assert.equal(tested.status, 200, JSON.stringify(tested.body))
    assert.deepEqual(tested.body.result, { sent: 1, removed: 0, failed: 0 })
    assert.deepEqual(push.refused, [])
    const [received] = push.receivedAt(browser.endpoint)
    assert.ok(received, 'the push service received the test push')
    assert.equal(received.claims.aud, push.origin, 'the JWT audience is the push service origin')
    assert.equal(received.claims.sub, webPush.Subject)
    assert.equal(received.ttl, '86400')
    assert.equal(received.urgency, 'high')
    assert.equal(received.message.title, 'Atrium')
    assert.equal(received.message.url, '/chat/')
    assert.equal(received.message.type, 'Test')
  },
)

forEachDialect(
  'a subscription the push service reports gone is removed; unsubscribe removes one',
  async (t, dialect) => {
    const { push, signedIn, subscriptionsOf } = await startWorld(t, dialect)
    const alice = await signedIn()
    const [working, gone] = [push.subscribe(), push.subscribe('gone')]
    for (const browser of [working, gone]) assert.equal((await alice.subscribe(browser)).status, 200)

    assert.deepEqual((await alice.test()).body.result, { sent: 1, removed: 1, failed: 0 })
    assert.deepEqual(await subscriptionsOf(alice.crmId), [working.endpoint])
    assert.equal(push.requestsTo(gone.endpoint), 1)
    assert.deepEqual((await alice.test()).body.result, { sent: 1, removed: 0, failed: 0 })
    assert.equal(push.requestsTo(gone.endpoint), 1, 'a removed subscription gets nothing more')

    const removed = await alice.unsubscribe(working.endpoint)
    assert.equal(removed.status, 200, JSON.stringify(removed.body))
    assert.equal(removed.body.result.removed, true)
    assert.equal((await alice.unsubscribe(working.endpoint)).body.result.removed, false)
    assert.deepEqual(await subscriptionsOf(alice.crmId), [])
    const none = await alice.test()
    assert.equal(none.status, 404)
    assert.equal(none.body.error.code, 2102)
  },
)

forEachDialect('subscriptions are validated, need a session and the CSRF token', async (t, dialect) => {
  const { url, push, signedIn, subscriptionsOf } = await startWorld(t, dialect)
  const alice = await signedIn()
  const browser = push.subscribe()
  const cases: [string, object, number][] = [
    ['keys missing', { endpoint: browser.endpoint }, 1000],
    ['an unknown field', { ...browser, extra: 1 }, 1000],
    ['a p256dh that is too short', { ...browser, keys: { ...browser.keys, p256dh: 'BAAA' } }, 2103],
    ['a p256dh off the curve', { ...browser, keys: { ...browser.keys, p256dh: `BA${'A'.repeat(85)}` } }, 2103],
    ['an auth secret of 8 bytes', { ...browser, keys: { ...browser.keys, auth: 'AAAAAAAAAAA' } }, 2103],
    ['an ftp endpoint', { ...browser, endpoint: 'ftp://127.0.0.1/push/x' }, 2103],
    ['an endpoint with credentials', { ...browser, endpoint: browser.endpoint.replace('//', '//u:p@') }, 2103],
  ]
  for (const [what, body, code] of cases) {
    const answer = await alice.subscribe(body)
    assert.equal(answer.body.error?.code, code, `${what}: ${JSON.stringify(answer.body)}`)
    assert.equal(answer.status, 400, what)
  }

  const noToken = await alice.call('POST', 'subscribe', browser, { 'x-csrf-token': 'wrong' })
  assert.equal(noToken.status, 403)
  assert.equal(noToken.body.error.code, 2004)
  const anonymous = await notificationsClient(url, '', '').subscribe(browser)
  assert.equal(anonymous.status, 401)
  assert.equal(anonymous.body.error.code, 2003)
  assert.equal((await notificationsClient(url, '', '').publicKey()).body.error.code, 2003)
  assert.deepEqual(await subscriptionsOf(alice.crmId), [], 'nothing was stored')
})

forEachDialect(
  'without AllowPrivateEndpoints only https endpoints on public hosts are accepted',
  async (t, dialect) => {
    const { signedIn, push, subscriptionsOf } = await startWorld(t, dialect, {
      WebPush: { AllowPrivateEndpoints: false },
    })
    const alice = await signedIn()
    const { keys } = push.subscribe()
    const refused = [
      'http://push.example.com/send/1',
      'https://127.0.0.1/send/1',
      'https://10.1.2.3/send/1',
      'https://[::1]/send/1',
      'https://[::ffff:192.168.0.1]/send/1',
      'https://localhost/send/1',
      // Other spellings of internal hosts (issue 14, item 6): trailing dots, case, numeric IPv4, IPv6 forms.
      'https://localhost.:8443/send/1',
      'https://localhost../send/1',
      'https://LOCALHOST/send/1',
      'https://push.localhost./send/1',
      'https://127.1/send/1',
      'https://0x7f000001/send/1',
      'https://2130706433/send/1',
      'https://0177.0.0.1/send/1',
      'https://127.0.0.1./send/1',
      'https://169.254.169.254./send/1',
      'https://[0:0:0:0:0:0:0:1]/send/1',
      'https://[0:0:0:0:0:ffff:7f00:1]/send/1',
      'https://[::ffff:10.0.0.1]/send/1',
      'https://[64:ff9b::a9fe:a9fe]/send/1',
      'https://[fe80::1%25eth0]/send/1',
      'https://0/send/1',
      'https://metadata/send/1',
    ]
    for (const endpoint of refused) {
      const answer = await alice.subscribe({ endpoint, keys })
      assert.equal(answer.body.error?.code, 2103, `${endpoint}: ${JSON.stringify(answer.body)}`)
    }
    const accepted = await alice.subscribe({ endpoint: 'https://push.example.com/send/1', keys })
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body))
    const dotted = await alice.subscribe({ endpoint: 'https://Push.Example.com./send/2', keys })
    assert.equal(dotted.status, 200, 'a public name with a trailing dot is still public')
    assert.deepEqual(await subscriptionsOf(alice.crmId), [
      'https://Push.Example.com./send/2',
      'https://push.example.com/send/1',
    ])
  },
)

forEachDialect(
  'a user keeps the newest browsers, and an endpoint belongs to whoever subscribed it last',
  async (t, dialect) => {
    const { push, signedIn, subscriptionsOf } = await startWorld(t, dialect, {
      WebPush: { MaxSubscriptionsPerUser: 2 },
    })
    const [alice, bob] = [await signedIn(), await signedIn()]
    const browsers = [push.subscribe(), push.subscribe(), push.subscribe()]
    for (const browser of browsers) assert.equal((await alice.subscribe(browser)).status, 200)
    assert.deepEqual(await subscriptionsOf(alice.crmId), [browsers[1]!.endpoint, browsers[2]!.endpoint].sort())

    assert.equal((await bob.subscribe(browsers[2]!)).status, 200)
    assert.deepEqual(await subscriptionsOf(alice.crmId), [browsers[1]!.endpoint])
    assert.deepEqual(await subscriptionsOf(bob.crmId), [browsers[2]!.endpoint])
    assert.equal((await alice.unsubscribe(browsers[2]!.endpoint)).body.result.removed, false, 'not Alice’s any more')
  },
)

forEachDialect('Web Push off answers PushDisabled; a node without PushSending sends nothing', async (t, dialect) => {
  const off = await startWorld(t, dialect, { WebPush: { Enabled: false } })
  const carol = await off.signedIn()
  for (const answer of [await carol.publicKey(), await carol.subscribe(off.push.subscribe()), await carol.test()]) {
    assert.equal(answer.status, 404)
    assert.equal(answer.body.error.code, 2100)
  }
  assert.equal((await carol.unsubscribe('https://push.example.com/x')).body.result.removed, false)

  const quiet = await startWorld(t, dialect, { PushSending: false })
  const dave = await quiet.signedIn()
  const browser = quiet.push.subscribe()
  assert.equal((await dave.subscribe(browser)).status, 200, 'any node stores subscriptions')
  const tested = await dave.test()
  assert.equal(tested.status, 503)
  assert.equal(tested.body.error.code, 2101)
  assert.deepEqual(quiet.push.requests, [])
})

forEachDialect(
  'twelve parallel subscriptions of one user leave MaxSubscriptionsPerUser rows in the database',
  async (t, dialect) => {
    const max = 3
    const { push, signedIn, subscriptionsOf } = await startWorld(t, dialect, {
      WebPush: { MaxSubscriptionsPerUser: max },
    })
    const alice = await signedIn()
    const browsers = Array.from({ length: 12 }, () => push.subscribe())
    const answers = await Promise.all(browsers.map((browser) => alice.subscribe(browser)))
    for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body))

    const kept = await subscriptionsOf(alice.crmId)
    assert.equal(kept.length, Math.min(browsers.length, max), 'the cap holds under parallel subscriptions')
    const sent = new Set(browsers.map((browser) => browser.endpoint))
    for (const endpoint of kept) assert.ok(sent.has(endpoint))
  },
)

forEachDialect('one endpoint subscribed by several users at once is stored once', async (t, dialect) => {
  const { push, signedIn, app } = await startWorld(t, dialect)
  const users = await Promise.all(Array.from({ length: 10 }, () => signedIn()))
  const browser = push.subscribe()
  const answers = await Promise.all(users.map((user) => user.subscribe(browser)))
  for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body))
  const rows = await app.store.db.selectFrom('push_subscriptions').select(['endpoint', 'crm_id']).execute()
  assert.equal(rows.length, 1)
  assert.equal(rows[0]!.endpoint, browser.endpoint)
  assert.ok(
    users.some((user) => user.crmId === rows[0]!.crm_id),
    'it belongs to one of them',
  )
})
