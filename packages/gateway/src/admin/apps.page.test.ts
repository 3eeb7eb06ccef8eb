import assert from 'node:assert/strict'
import { AppFlag } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { assertActionsRefused, type Panel, startPanel, tableRows } from '../../test/admin.ts'
import { appOrigins } from '../apps/apps.repository.ts'

async function shopOf(panel: Panel) {
  const owner = await panel.store.users.create({ name: 'Oscar Owner' })
  return panel.store.apps.create({
    name: 'Shop',
    owner: owner.crm_id,
    flags: AppFlag.AppAuthAndCORS,
    origins: ['https://shop.example'],
  })
}

/** The notice or error line a redirect carries. */
function lineOf(location: string, kind: 'notice' | 'error'): string {
  return new URL(location, 'http://panel').searchParams.get(kind) ?? ''
}

forEachDialect(
  'an operator changes an app’s flags and origins and rotates its secrets, each seen once',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const { app, secret } = await shopOf(panel)
    const detailPath = `/ProxyAdmin/AppDetail?Id=${app.id}`

    const list = await panel.page('/ProxyAdmin/Apps', panel.operator)
    assert.match(list.html, new RegExp(`<a href="/ProxyAdmin/AppDetail\\?Id=${app.id}">Shop</a>`))
    const detail = await panel.page(detailPath, panel.operator)
    assert.equal(detail.status, 200)
    assert.match(detail.html, /<h1>Shop \(\d+\)<\/h1>/)
    assert.match(detail.html, /name="AppAuthAndCORS" value="true" checked/)
    assert.match(detail.html, /<textarea[^>]*name="Origins"[^>]*>https:\/\/shop\.example<\/textarea>/)
    assert.doesNotMatch(detail.html, new RegExp(app.webhook_secret))

    const flags = await panel.post('/ProxyAdmin/AppDetail/Flags', { Id: String(app.id) }, panel.operator)
    assert.equal(flags.status, 303)
    assert.equal(lineOf(flags.location, 'notice'), 'Flags of Shop saved: no flags.')
    assert.equal((await panel.store.apps.get(app.id))?.flags, 0)
    await panel.post('/ProxyAdmin/AppDetail/Flags', { Id: String(app.id), AppAuthAndCORS: 'true' }, panel.operator)
    assert.equal((await panel.store.apps.get(app.id))?.flags, AppFlag.AppAuthAndCORS)

    const origins = await panel.post(
      '/ProxyAdmin/AppDetail/Origins',
      { Id: String(app.id), Origins: 'https://shop.example/\r\nhttps://m.shop.example:8443, https://shop.example' },
      panel.operator,
    )
    assert.equal(
      lineOf(origins.location, 'notice'),
      'Origins of Shop saved: https://shop.example https://m.shop.example:8443.',
    )
    assert.deepEqual(appOrigins((await panel.store.apps.get(app.id))!), [
      'https://shop.example',
      'https://m.shop.example:8443',
    ])

    // The new secret is on the answer page only: no redirect, never stored by the browser.
    const rotated = await panel.post('/ProxyAdmin/AppDetail/RotateSecret', { Id: String(app.id) }, panel.operator)
    assert.equal(rotated.status, 200)
    const shown = /<code id="new-secret">([^<]+)<\/code>/.exec(rotated.body)?.[1]
    assert.ok(shown && shown !== secret)
    assert.ok(await panel.store.apps.verify(app.id, shown))
    assert.equal(await panel.store.apps.verify(app.id, secret), undefined)
    assert.doesNotMatch((await panel.page(detailPath, panel.operator)).html, new RegExp(shown))

    const hook = await panel.post('/ProxyAdmin/AppDetail/RotateWebhookSecret', { Id: String(app.id) }, panel.operator)
    assert.equal(hook.status, 200)
    const webhookSecret = /<code id="new-secret">(whsec_[^<]+)<\/code>/.exec(hook.body)?.[1]
    assert.equal(webhookSecret, (await panel.store.apps.get(app.id))?.webhook_secret)
    assert.notEqual(webhookSecret, app.webhook_secret)

    const log = await panel.page('/ProxyAdmin/Actions', panel.operator)
    assert.deepEqual(
      tableRows(log.html).map((row) => row.split(' ').slice(6).join(' ')),
      [
        `app.webhook_secret.rotate ${app.id} ok`,
        `app.secret.rotate ${app.id} ok`,
        `app.origins ${app.id} https://shop.example https://m.shop.example:8443 ok`,
        `app.flags ${app.id} AppAuthAndCORS ok`,
        `app.flags ${app.id} no flags ok`,
      ],
    )
    // Neither secret is ever written to the audit.
    const audit = JSON.stringify(await panel.store.db.selectFrom('admin_actions').selectAll().execute())
    assert.ok(!audit.includes(shown) && !audit.includes(webhookSecret!))
  },
)

forEachDialect(
  'an operator registers an app: its settings are kept, its secrets shown once, and bad settings register nothing',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const owner = await panel.store.users.create({ name: 'Oscar Owner' })
    const list = await panel.page('/ProxyAdmin/Apps', panel.operator)
    assert.match(list.html, /No app is registered yet/)
    assert.match(list.html, /<form class="filters" method="post" action="\/ProxyAdmin\/Apps\/Create">/)

    const refusals: [Record<string, string>, RegExp][] = [
      [{ Name: '', Owner: String(owner.crm_id) }, /an app name has 1 to 200 characters/],
      [{ Name: 'x'.repeat(201), Owner: String(owner.crm_id) }, /an app name has 1 to 200 characters/],
      [{ Name: 'Shop', Owner: '424242' }, /No user "424242" to own the app/],
      [{ Name: 'Shop', Owner: 'oscar' }, /No user "oscar" to own the app/],
      [{ Name: 'Shop', Owner: String(owner.crm_id), Callback: 'ftp://shop.example/hook' }, /must be http\(s\)/],
      [
        { Name: 'Shop', Owner: String(owner.crm_id), Events: 'NewChatMessage, bad/type' },
        /invalid event type "bad\/type"/,
      ],
      [{ Name: 'Shop', Owner: String(owner.crm_id), Origins: 'https://shop.example/app' }, /without a path/],
    ]
    for (const [form, reason] of refusals) {
      const answer = await panel.post('/ProxyAdmin/Apps/Create', form, panel.operator)
      assert.equal(answer.status, 303)
      assert.match(lineOf(answer.location, 'error'), reason, JSON.stringify(form).slice(0, 80))
    }
    assert.deepEqual(await panel.store.apps.page({ limit: 10 }), [])

    const created = await panel.post(
      '/ProxyAdmin/Apps/Create',
      {
        Name: ' Shop ',
        Owner: String(owner.crm_id),
        AppAuthAndCORS: 'true',
        Origins: 'https://shop.example\r\nhttps://m.shop.example:8443/',
        Callback: 'https://shop.example/hooks/atrium',
        Events: 'NewChatMessage, ChatCreated NewChatMessage',
      },
      panel.operator,
    )
    // The secrets are on the answer page only: no redirect, never stored by the browser.
    assert.equal(created.status, 200)
    const id = Number(/<code id="new-app-id">(\d+)<\/code>/.exec(created.body)?.[1])
    const secret = /<code id="new-secret">([^<]+)<\/code>/.exec(created.body)?.[1] ?? ''
    const webhookSecret = /<code id="new-webhook-secret">(whsec_[^<]+)<\/code>/.exec(created.body)?.[1]
    const app = (await panel.store.apps.get(id))!
    assert.equal(app.name, 'Shop')
    assert.equal(app.owner, owner.crm_id)
    assert.equal(app.flags, AppFlag.AppAuthAndCORS)
    assert.deepEqual(appOrigins(app), ['https://shop.example', 'https://m.shop.example:8443'])
    assert.equal(app.callback_url, 'https://shop.example/hooks/atrium')
    assert.deepEqual(JSON.parse(app.event_types), ['NewChatMessage', 'ChatCreated'])
    assert.equal(webhookSecret, app.webhook_secret)
    assert.ok(await panel.store.apps.verify(id, secret), 'the secret shown signs the app in')
    const after = await panel.page('/ProxyAdmin/Apps', panel.operator)
    assert.match(after.html, new RegExp(`<a href="/ProxyAdmin/AppDetail\\?Id=${id}">Shop</a>`))
    assert.ok(!after.html.includes(secret) && !after.html.includes(webhookSecret!))

    const log = tableRows((await panel.page('/ProxyAdmin/Actions', panel.operator)).html)
    assert.equal(log.length, refusals.length + 1)
    assert.match(log[0]!, new RegExp(`app\\.create Shop ${id} Shop ok$`))
    const audit = JSON.stringify(await panel.store.db.selectFrom('admin_actions').selectAll().execute())
    assert.ok(!audit.includes(secret) && !audit.includes(webhookSecret!), 'no secret in the audit')
  },
)

forEachDialect(
  'origins are refused as the CLI refuses them, and a refused change changes nothing',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const { app } = await shopOf(panel)
    const attempts: [string, RegExp][] = [
      ['https://shop.example/path', /without a path/],
      ['ftp://files.example', /must be an http\(s\) URL/],
      ['shop.example', /must be an http\(s\) URL/],
      ['https://user:pw@shop.example', /without a path/],
    ]
    for (const [origins, reason] of attempts) {
      const answer = await panel.post(
        '/ProxyAdmin/AppDetail/Origins',
        { Id: String(app.id), Origins: origins },
        panel.operator,
      )
      assert.equal(answer.status, 303)
      assert.match(lineOf(answer.location, 'error'), reason, origins)
      const page = await panel.page(answer.location, panel.operator)
      assert.match(page.html, /<p class="notice error" role="status">/)
    }
    const unknown = await panel.post('/ProxyAdmin/AppDetail/RotateSecret', { Id: '12345' }, panel.operator)
    assert.equal(lineOf(unknown.location, 'error'), 'No such app.')
    assert.deepEqual(appOrigins((await panel.store.apps.get(app.id))!), ['https://shop.example'])
    const outcomes = tableRows((await panel.page('/ProxyAdmin/Actions', panel.operator)).html).map(
      (row) => row.split(' ')[6],
    )
    assert.deepEqual(outcomes, ['app.secret.rotate', 'app.origins', 'app.origins', 'app.origins', 'app.origins'])
  },
)

forEachDialect('app actions refuse a non-operator and a cross-origin form, and change nothing', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const { app, secret } = await shopOf(panel)
  const id = String(app.id)
  const actions: [string, Record<string, string>][] = [
    ['/ProxyAdmin/AppDetail/Flags', { Id: id }],
    ['/ProxyAdmin/AppDetail/Origins', { Id: id, Origins: 'https://evil.example' }],
    ['/ProxyAdmin/AppDetail/RotateSecret', { Id: id }],
    ['/ProxyAdmin/AppDetail/RotateWebhookSecret', { Id: id }],
    ['/ProxyAdmin/Apps/Create', { Name: 'Evil', Owner: String(app.owner) }],
  ]
  assert.equal((await panel.page(`/ProxyAdmin/AppDetail?Id=${id}`, panel.member)).status, 403)
  await assertActionsRefused(panel, actions, (body) => assert.doesNotMatch(body, /new-secret/))
  const after = (await panel.store.apps.get(app.id))!
  assert.equal(after.flags, AppFlag.AppAuthAndCORS)
  assert.deepEqual(appOrigins(after), ['https://shop.example'])
  assert.equal(after.webhook_secret, app.webhook_secret)
  assert.ok(await panel.store.apps.verify(app.id, secret))
  assert.deepEqual(
    (await panel.store.apps.page({ limit: 10 })).map((row) => row.name),
    ['Shop'],
  )
  assert.equal((await panel.page('/ProxyAdmin/Actions', panel.operator)).html.includes('<tbody>'), false)
})
