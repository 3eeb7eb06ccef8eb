import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AppFlag, ContactFlags } from '@atrium/platform'
import { until } from '@atrium/platform/testing'
import { startPushService, webPushSettings } from '../../../gateway/test/push-service.ts'
import { startEchoUpstream } from '../../../gateway/test/upstream.ts'
import { checkAccessibility } from './accessibility.ts'
import { launchBrowser, startSystem } from './system.ts'

const EMAIL = 1

test('an operator signs in to /ProxyAdmin/, finds a user, revokes a session, edits a route the proxy follows, tests a push and rotates an app secret', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const echo = await startEchoUpstream(t)
  const webPush = webPushSettings()
  const push = await startPushService(t, webPush)
  const system = await startSystem(t, 'sqlite', { WebPush: webPush })
  const { store } = system.gateway
  const operator = await store.users.create({ name: 'Olive Operator', scopes: ['admin'] })
  await store.users.addContact(operator.crm_id, EMAIL, 'olive@example.com', ContactFlags.Verified)
  const rita = await store.users.create({ name: 'Rita Remote' })
  const shop = await store.apps.create({ name: 'Shop', owner: rita.crm_id })
  const ritaSession = await store.sessions.create({
    crmId: rita.crm_id,
    method: 'email_otp',
    ip: '198.51.100.7',
    userAgent: 'Rita’s phone',
  })
  const browserSubscription = push.subscribe()
  await store.db
    .insertInto('push_subscriptions')
    .values({
      id: store.nextTick(),
      crm_id: rita.crm_id,
      endpoint: browserSubscription.endpoint,
      p256dh: browserSubscription.keys.p256dh,
      auth: browserSubscription.keys.auth,
      user_agent: 'Rita’s phone',
      created: Date.now(),
      last_success: 0,
      failures: 0,
      last_error: '',
    })
    .execute()

  // The panel has no script under its CSP; the accessibility check injects one, so this context bypasses it.
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, locale: 'en-GB', bypassCSP: true })
  const page = await context.newPage()

  // Anonymous: sent to sign in, and back to the page afterwards.
  await page.goto(`${system.url}/ProxyAdmin/Users`)
  await page.waitForURL(/\/chat\/sign-in\?next=%2FProxyAdmin%2FUsers$/)
  await page.getByLabel('Email address').fill('olive@example.com')
  await page.getByRole('button', { name: 'Send code' }).click()
  await page.getByLabel('Sign-in code').waitFor()
  const { code } = await system.mailTo('olive@example.com')
  await page.getByLabel('Sign-in code').fill(code)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForURL(`${system.url}/ProxyAdmin/Users`)
  await page.getByRole('heading', { name: 'Users' }).waitFor()

  // Filter, then open the user's details.
  await page.getByLabel('Name, email, phone or CRM id').fill('rita')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.waitForURL(/Search=rita/)
  assert.equal(await page.locator('tbody tr').count(), 1)
  await page.getByRole('link', { name: 'Rita Remote' }).click()
  await page.getByRole('heading', { name: `Rita Remote (${rita.crm_id})` }).waitFor()
  await checkAccessibility(page, 'proxy-admin-user')

  // Revoke Rita's session.
  await page.locator('tr', { hasText: '198.51.100.7' }).getByRole('button', { name: 'Revoke' }).click()
  await page.getByRole('status').filter({ hasText: 'Session revoked' }).waitFor()
  assert.equal(await store.sessions.resolve(ritaSession.token), undefined)

  // Add a route, see the proxy follow it, then require a session on it.
  await page.getByRole('link', { name: 'Routes' }).click()
  await page.getByLabel('Prefix').fill('/shop/')
  await page.getByLabel('Upstream', { exact: true }).fill(echo.url)
  await page.getByRole('button', { name: 'Add route' }).click()
  await page
    .getByRole('status')
    .filter({ hasText: `Route /shop/ → ${echo.url} (no flags) saved.` })
    .waitFor()
  assert.equal((await fetch(`${system.url}/shop/items`)).status, 200)
  await page.locator('tr', { hasText: '/shop/' }).getByLabel('RequireSession').check()
  await page.locator('tr', { hasText: '/shop/' }).getByRole('button', { name: 'Save' }).click()
  await page
    .getByRole('status')
    .filter({ hasText: `Route /shop/ → ${echo.url} (RequireSession) saved.` })
    .waitFor()
  assert.equal((await fetch(`${system.url}/shop/items`)).status, 401)
  await checkAccessibility(page, 'proxy-admin-routes')

  // Test Rita's push subscription: the push service receives it.
  await page.getByRole('link', { name: 'Push subscriptions' }).click()
  await page.locator('tr', { hasText: 'Rita Remote' }).getByRole('button', { name: 'Test' }).click()
  await page.getByRole('status').filter({ hasText: 'Test push accepted by the push service.' }).waitFor()
  await until(() => push.receivedAt(browserSubscription.endpoint).length === 1, 'the test push')

  // Rotate an app's secret: the new one is shown once, on the page that answers, and works.
  await page.getByRole('link', { name: 'Apps', exact: true }).click()
  await page.getByRole('link', { name: 'Shop', exact: true }).click()
  await page.getByRole('heading', { name: `Shop (${shop.app.id})` }).waitFor()
  await checkAccessibility(page, 'proxy-admin-app')
  await page.getByRole('button', { name: 'Rotate app secret' }).click()
  await page.getByRole('heading', { name: 'New app secret of Shop' }).waitFor()
  const secret = (await page.locator('#new-secret').textContent()) ?? ''
  assert.equal((await store.apps.verify(shop.app.id, secret))?.id, shop.app.id)
  await page.getByRole('link', { name: 'Back to Shop' }).click()
  await page.getByRole('heading', { name: `Shop (${shop.app.id})` }).waitFor()
  assert.equal(await page.getByText(secret).count(), 0)

  // Register another app from the Apps page: its secrets are shown once, and the secret signs it in.
  await page.getByRole('link', { name: 'Apps', exact: true }).click()
  await page.getByRole('heading', { name: 'Register an app' }).waitFor()
  await checkAccessibility(page, 'proxy-admin-apps')
  await page.getByLabel('Name').fill('Ledger')
  await page.getByLabel("Owner's user id").fill(String(rita.crm_id))
  await page.getByRole('checkbox', { name: 'AppAuthAndCORS' }).check()
  await page.getByLabel('Allowed origins').fill('https://ledger.example')
  await page.getByRole('button', { name: 'Register the app' }).click()
  await page.getByRole('heading', { name: 'Ledger registered' }).waitFor()
  const ledgerId = Number(await page.locator('#new-app-id').textContent())
  const ledgerSecret = (await page.locator('#new-secret').textContent()) ?? ''
  const ledger = await store.apps.verify(ledgerId, ledgerSecret)
  assert.deepEqual([ledger?.name, ledger?.owner, ledger?.flags], ['Ledger', rita.crm_id, AppFlag.AppAuthAndCORS])
  await page.getByRole('link', { name: 'Open Ledger' }).click()
  await page.getByRole('heading', { name: `Ledger (${ledgerId})` }).waitFor()

  // The login audit has the operator's sign-in; the actions log has every change.
  await page.getByRole('link', { name: 'Login audit' }).click()
  await page.getByLabel('User (CRM id)').fill(String(operator.crm_id))
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.locator('tbody tr', { hasText: 'signed in' }).first().waitFor()
  await checkAccessibility(page, 'proxy-admin-login-audit')
  await page.getByRole('link', { name: 'STUN monitor' }).click()
  await page.getByText('No client has reported its ICE gathering yet.').waitFor()
  await checkAccessibility(page, 'proxy-admin-stun-monitor')
  // The sections not used above open from the navigation and pass axe too.
  for (const name of ['Domains', 'Federation partners', 'Settings']) {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click()
    await page.getByRole('heading', { level: 1, name }).waitFor()
    await checkAccessibility(page, `proxy-admin-${name.toLowerCase().replace(' ', '-')}`)
  }
  await page.getByRole('link', { name: 'Operator actions' }).click()
  assert.equal(await page.locator('tbody tr').count(), 6)
  await checkAccessibility(page, 'proxy-admin-actions')
})
