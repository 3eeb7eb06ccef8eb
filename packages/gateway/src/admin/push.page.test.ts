import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { nextLink, startPanel, tableRows } from '../../test/admin.ts'
import { startPushService, webPushSettings } from '../../test/push-service.ts'
import { createPushSubscriptions } from '../notifications/push-subscriptions.repository.ts'

forEachDialect('the Test action sends one real push to the chosen browser only', async (t, dialect) => {
  const webPush = webPushSettings()
  const push = await startPushService(t, webPush)
  const panel = await startPanel(t, dialect, { settings: { WebPush: webPush } })
  const { store } = panel
  const subscriptions = createPushSubscriptions(store.db, store.dialect, store.nextTick)
  const pia = await store.users.create({ name: 'Pia Pusher' })
  const browsers = [push.subscribe(), push.subscribe(), push.subscribe('gone')]
  const saved = []
  for (const browser of browsers) {
    const { subscription } = await subscriptions.save(
      { crmId: pia.crm_id, endpoint: browser.endpoint, ...browser.keys, userAgent: 'Firefox' },
      10,
    )
    saved.push(subscription)
  }

  const page = await panel.page('/ProxyAdmin/PushSubscriptions', panel.operator)
  const rows = tableRows(page.html)
  assert.equal(rows.length, 3)
  assert.match(rows[0]!, new RegExp(`^Pia Pusher \\(${pia.crm_id}\\) 127\\.0\\.0\\.1:\\d+ Firefox .* never 0 Test$`))
  // The capability URL of a browser is not shown, only its push service.
  assert.doesNotMatch(page.html, new RegExp(browsers[0]!.endpoint))

  const tested = await panel.post(
    '/ProxyAdmin/PushSubscriptions/Test',
    { Subscription: String(saved[0]!.id) },
    panel.operator,
  )
  assert.equal(tested.status, 303)
  assert.equal(
    new URL(tested.location, panel.url).searchParams.get('notice'),
    'Test push accepted by the push service.',
  )
  const [received] = push.receivedAt(browsers[0]!.endpoint)
  assert.equal(received?.message.type, 'Test')
  assert.equal(received?.claims.sub, webPush.Subject)
  assert.equal(push.receivedAt(browsers[1]!.endpoint).length, 0)
  assert.match(
    tableRows((await panel.page('/ProxyAdmin/PushSubscriptions', panel.operator)).html).at(-1)!,
    /Firefox \S+ \S+ UTC \S+ \S+ UTC 0/,
  )

  const gone = await panel.post(
    '/ProxyAdmin/PushSubscriptions/Test',
    { Subscription: String(saved[2]!.id) },
    panel.operator,
  )
  assert.match(new URL(gone.location, panel.url).searchParams.get('error') ?? '', /unsubscribed \(410\); removed/)
  assert.equal(await subscriptions.get(saved[2]!.id), undefined)

  const log = tableRows((await panel.page('/ProxyAdmin/Actions', panel.operator)).html)
  assert.match(log[0]!, new RegExp(`push\\.test subscription ${saved[2]!.id} .*unsubscribed`))
  assert.match(
    log[1]!,
    new RegExp(`push\\.test subscription ${saved[0]!.id} user ${pia.crm_id}, 127\\.0\\.0\\.1:\\d+ ok$`),
  )
})

forEachDialect(
  'push subscriptions page by user with a cursor; a node that sends no pushes offers no Test',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const { store } = panel
    const subscriptions = createPushSubscriptions(store.db, store.dialect, store.nextTick)
    const users = [await store.users.create({ name: 'One' }), await store.users.create({ name: 'Two' })]
    const ids: number[] = []
    for (let index = 0; index < 5; index++) {
      const { subscription } = await subscriptions.save(
        {
          crmId: users[index % 2]!.crm_id,
          endpoint: `https://push.example/${index}`,
          p256dh: 'k',
          auth: 'a',
          userAgent: `Browser ${index}`,
        },
        10,
      )
      ids.push(subscription.id)
    }
    const first = await panel.page(`/ProxyAdmin/PushSubscriptions?User=${users[0]!.crm_id}&Limit=2`, panel.operator)
    assert.match(first.html, /This node does not send pushes/)
    assert.doesNotMatch(first.html, /PushSubscriptions\/Test/)
    const next = nextLink(first.html)
    const second = await panel.page(next!, panel.operator)
    assert.deepEqual(
      [...tableRows(first.html), ...tableRows(second.html)].map((row) => /Browser (\d)/.exec(row)![1]),
      ['4', '2', '0'],
    )
    const refused = await panel.post(
      '/ProxyAdmin/PushSubscriptions/Test',
      { Subscription: String(ids[0]) },
      panel.operator,
    )
    assert.equal(new URL(refused.location, panel.url).searchParams.get('error'), 'This node does not send pushes.')
  },
)
