import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startOidcProvider } from '../../../gateway/test/oauth-peers.ts'
import { checkAccessibility } from './accessibility.ts'
import { launchBrowser, openPage, screenshot, startSystem } from './system.ts'

test('the picker lists a partner added at run time, and a click signs in at it and comes back', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const redirectUri = `${system.url}/auth/v1/federated/return`
  const peer = await startOidcProvider(t, {
    clientId: 'atrium-e2e',
    clientSecret: 'atrium-e2e-partner-secret',
    redirectUri,
    accounts: { erin: { email: 'erin@partner.example', emailVerified: true, name: 'Erin' } },
  })
  const { page, errors } = await openPage(browser)

  // Without partners or configured providers the picker is not there.
  await page.goto(`${system.url}/chat/sign-in`)
  await page.getByRole('heading', { name: 'Sign in to Atrium' }).waitFor()
  assert.equal(await page.getByRole('navigation', { name: 'Sign in with another account' }).count(), 0)

  // The partner is added to the running gateway (as `atrium partner add` does); the same build shows it.
  await system.gateway.store.federation.partners.add({
    slug: 'partner',
    name: 'Partner Login',
    logo_url: '',
    issuer: peer.issuer,
    client_id: 'atrium-e2e',
    client_secret: 'atrium-e2e-partner-secret',
    scopes: 'openid email profile',
  })
  await page.reload()
  const picker = page.getByRole('navigation', { name: 'Sign in with another account' })
  const link = picker.getByRole('link', { name: 'Continue with Partner Login' })
  await link.waitFor()
  await checkAccessibility(page, 'federated picker')
  await screenshot(page, 'federated-picker')

  await link.click()
  await page.waitForURL((url) => url.origin === peer.issuer)
  await page.locator('input[name="login"]').fill('erin')
  await page.locator('input[name="password"]').fill('any')
  await page.locator('button[type="submit"]').click()
  await page.getByRole('button', { name: 'Continue' }).click()
  await page.waitForURL((url) => url.origin === system.url && url.pathname.startsWith('/chat'))
  const crmId = (await page.getByTestId('my-crm-id').textContent()) ?? ''
  assert.match(crmId, /^[1-9][0-9]*$/)
  await screenshot(page, 'federated-signed-in')
  const contact = await system.gateway.store.users.findContact(1, 'erin@partner.example')
  assert.equal(String(contact?.crm_id), crmId)
  const audit = await system.gateway.store.db.selectFrom('login_audit').select(['method', 'success']).execute()
  assert.deepEqual(
    audit.map((row) => [row.method, Number(row.success)]),
    [['federation_partner', 1]],
  )
  // The account page lists the partner account by the email it was linked by; with that verified
  // email to sign in by, unlinking it is allowed.
  await page.getByText('Profile', { exact: true }).click()
  await page.getByRole('link', { name: 'Account and security' }).click()
  const linked = page.locator('.credential-list li', { hasText: 'Partner Login' })
  await linked.filter({ hasText: 'erin@partner.example' }).waitFor()
  await page.getByRole('button', { name: 'Unlink Partner Login' }).click()
  await page.getByRole('status').filter({ hasText: 'Partner Login is unlinked.' }).waitFor()
  // The provider's own pages (oidc-provider's development forms) load web fonts and a favicon it lacks.
  const ours = errors.filter((error) => !error.includes(peer.issuer) && !error.includes('fonts.googleapis.com'))
  assert.deepEqual(ours, [])
})
