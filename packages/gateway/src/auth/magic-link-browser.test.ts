import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { createTestDatabaseUrl, freePort } from '@atrium/platform/testing'
import { launchBrowser } from '../../../web/src/e2e/system.ts'
import { SERVICE_SECRET } from '../../test/support.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'
import { createChallenges } from './challenges.repository.ts'

/** A gateway whose PublicOrigin is the address the browser opens (the CSRF check compares Origin with it). */
async function startGatewayForBrowser(t: TestContext) {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const config = loadGatewayConfig(
    { GatewayDB: await createTestDatabaseUrl(t, 'sqlite'), ServiceSecret: SERVICE_SECRET, PublicOrigin: url },
    {},
  )
  const app = await buildGateway(config)
  t.after(() => app.close())
  await app.listen({ host: '127.0.0.1', port })
  const challenges = createChallenges(app.store.db, app.store.nextTick, config.Otp, { codeKey: SERVICE_SECRET })

  /** The link a sign-in mail to `email` would carry, leading back to `returnTo`. */
  async function mailedLink(email: string, returnTo: string): Promise<string> {
    const started = await challenges.create({ kind: 'email_otp', target: email, client: '', returnTo, deviceGuid: '' })
    assert.ok('linkToken' in started)
    return `${url}/auth/v1/magic?token=${started.linkToken}`
  }

  return { url, app, mailedLink }
}

test('opening the magic link signs in with the client fields and the device GUID of localStorage', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const gateway = await startGatewayForBrowser(t)
  // The return address is the session endpoint, so landing there shows who is signed in.
  const link = await gateway.mailedLink('browser@example.com', '/auth/v1/session')

  const context = await browser.newContext({
    screen: { width: 1280, height: 720 },
    locale: 'de-DE',
    timezoneId: 'Asia/Tokyo',
  })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  // The gateway serves its own favicon, so the browser's request for it is no error either.
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  await page.goto(link)
  await page.waitForURL(`${gateway.url}/auth/v1/session`)

  const session = JSON.parse((await page.locator('body').textContent()) ?? '')
  assert.equal(session.result.keyType, 'session')
  const stored = await page.evaluate(() => localStorage.getItem('atrium.deviceGuid'))
  assert.match(stored ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  const row = await gateway.app.store.db
    .selectFrom('login_audit')
    .selectAll()
    .where('method', '=', 'magic_link')
    .executeTakeFirstOrThrow()
  assert.deepEqual(
    [row.success, String(row.crm_id), row.device_guid, row.screen, row.timezone, row.language],
    [1, session.result.crmId, stored, '1280x720', 'Asia/Tokyo', 'de-DE'],
  )
  assert.deepEqual(errors, [], 'no script errors and no CSP violations')

  // The same browser keeps its GUID: a second link reuses the one in localStorage.
  await page.goto(await gateway.mailedLink('browser@example.com', '/auth/v1/session'))
  await page.waitForURL(`${gateway.url}/auth/v1/session`)
  const rows = await gateway.app.store.db.selectFrom('login_audit').select('device_guid').execute()
  assert.deepEqual(
    rows.map((each) => each.device_guid),
    [stored, stored],
  )
})

test('without JavaScript the page posts the form from its button and signs in', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const gateway = await startGatewayForBrowser(t)
  const link = await gateway.mailedLink('no-script@example.com', '/auth/v1/session')
  const context = await browser.newContext({ javaScriptEnabled: false })
  const page = await context.newPage()

  await page.goto(link)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${gateway.url}/auth/v1/session`)

  const session = JSON.parse((await page.locator('body').textContent()) ?? '')
  assert.equal(session.result.keyType, 'session', 'the form post passed the login-CSRF check and signed in')

  await page.goto(link)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByText('This sign-in link expired or was already used').waitFor()
})
