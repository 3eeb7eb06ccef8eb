import assert from 'node:assert/strict'
import { AppFlag } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { startPanel, tableRows } from '../../test/admin.ts'
import { SERVICE_SECRET } from '../../test/support.ts'
import { challengeValue, createProjectDomains } from '../domains/domains.repository.ts'

forEachDialect('apps, domains and federation partners are listed without their secrets', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const { store } = panel
  const owner = await store.users.create({ name: 'Oscar Owner' })
  const { app, secret } = await store.apps.create({
    name: 'Shop',
    owner: owner.crm_id,
    flags: AppFlag.AppAuthAndCORS,
    callbackUrl: 'https://shop.example/hook',
    origins: ['https://shop.example'],
    eventTypes: ['message'],
  })
  const domains = createProjectDomains(store.db, store.nextTick)
  const domain = await domains.add('Chat.Example.com')
  const partner = await store.federation.partners.add({
    slug: 'acme',
    name: 'Acme SSO',
    logo_url: '',
    issuer: 'https://sso.acme.example',
    client_id: 'atrium-client',
    client_secret: 'partner-client-secret-value',
    scopes: 'openid email',
  })
  assert.ok(partner)

  const apps = await panel.page('/ProxyAdmin/Apps', panel.operator)
  assert.match(
    tableRows(apps.html)[0]!,
    new RegExp(
      `^Shop \\(${app.id}\\) Oscar Owner \\(${owner.crm_id}\\) AppAuthAndCORS https://shop.example https://shop.example/hook message`,
    ),
  )
  assert.doesNotMatch(apps.html, new RegExp(secret))
  assert.doesNotMatch(apps.html, new RegExp(app.webhook_secret))

  const listed = await panel.page('/ProxyAdmin/Domains', panel.operator)
  assert.match(
    tableRows(listed.html)[0]!,
    new RegExp(
      `^chat\\.example\\.com pending verification _atrium-challenge\\.chat\\.example\\.com ${challengeValue(domain.token)} not yet`,
    ),
  )

  const partners = await panel.page('/ProxyAdmin/Partners', panel.operator)
  assert.match(tableRows(partners.html)[0]!, /^Acme SSO acme https:\/\/sso\.acme\.example atrium-client openid email/)
  assert.doesNotMatch(partners.html, /partner-client-secret-value/)
})

forEachDialect('the settings page shows the effective configuration with secrets redacted', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const settings = await panel.page('/ProxyAdmin/Settings', panel.operator)
  assert.equal(settings.status, 200)
  const rows = tableRows(settings.html)
  assert.ok(rows.includes(`PublicOrigin ${panel.config.PublicOrigin} at restart`))
  assert.ok(rows.includes('ServiceSecret [redacted] at restart'))
  assert.doesNotMatch(settings.html, new RegExp(SERVICE_SECRET))
  assert.ok(rows.some((row) => row.startsWith('Proxy.Routes [] seeds the route map at start')))
})

forEachDialect('empty lists say how to add the first entry', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  for (const [path, text] of [
    ['/ProxyAdmin/Apps', /No app is registered/],
    ['/ProxyAdmin/Domains', /No project domain yet/],
    ['/ProxyAdmin/Partners', /No federation partner yet/],
  ] as const) {
    assert.match((await panel.page(path, panel.operator)).html, text)
  }
})
