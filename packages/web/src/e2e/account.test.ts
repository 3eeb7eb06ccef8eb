import assert from 'node:assert/strict'
import { generateKeyPairSync, sign } from 'node:crypto'
import { test } from 'node:test'
import { checkAccessibility } from './accessibility.ts'
import { launchBrowser, openPage, signInByEmail, startSystem } from './system.ts'

test('the account page lists signed-in devices, signs one out remotely, and takes a key for scripts', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const desk = await openPage(browser)
  const phone = await openPage(browser, { width: 390, height: 780 })
  await desk.page.goto(`${system.url}/chat/sign-in`)
  const me = await signInByEmail(desk.page, system, 'dana@example.com')
  await phone.page.goto(`${system.url}/chat/sign-in`)
  assert.equal(await signInByEmail(phone.page, system, 'dana@example.com'), me)

  await desk.page.getByText('Profile', { exact: true }).click()
  await desk.page.getByRole('link', { name: 'Account and security' }).click()
  await desk.page.getByRole('heading', { name: 'Account and security' }).waitFor()
  const devices = desk.page.locator('.session-list li')
  await devices.nth(1).waitFor()
  assert.equal(await devices.count(), 2)
  assert.equal(await desk.page.locator('.session-list li.current').count(), 1)
  assert.match((await desk.page.locator('.contact-list').textContent()) ?? '', /dana@example\.com\s*email · verified/)

  // A key for scripts: pasted as PEM, then used by a script (this test) to sign in.
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  await desk.page.getByLabel('Key name').fill('backup script')
  await desk.page.getByLabel('Public key').fill(publicKey.export({ type: 'spki', format: 'pem' }).toString())
  await desk.page.getByRole('button', { name: 'Add key' }).click()
  await desk.page
    .getByRole('status')
    .filter({ hasText: /^backup script added \(SHA256:/ })
    .waitFor()
  await desk.page.getByLabel('Public key').fill('ssh-rsa AAAA not an ed25519 key')
  await desk.page.getByLabel('Key name').fill('wrong')
  await desk.page.getByRole('button', { name: 'Add key' }).click()
  await desk.page.getByRole('status').filter({ hasText: 'That is not an Ed25519 public key.' }).waitFor()

  const post = (path: string, body: object) =>
    fetch(`${system.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'backup-script/1.0' },
      body: JSON.stringify(body),
    })
  const raw = publicKey.export({ format: 'jwk' }).x as string
  const { result } = (await (await post('/auth/v1/userkey/challenge', { publicKey: raw })).json()) as {
    result: { challenge: string }
  }
  const signature = sign(null, Buffer.from(result.challenge, 'utf8'), privateKey).toString('base64url')
  const script = await post('/auth/v1/userkey/verify', { challenge: result.challenge, signature })
  assert.equal(script.status, 200)
  await desk.page.reload()
  await desk.page.locator('.session-list li', { hasText: 'Signed in by key (script or device)' }).waitFor()
  await desk.page
    .locator('.credential-list li', { hasText: 'backup script' })
    .filter({ hasText: 'last used' })
    .waitFor()
  await checkAccessibility(desk.page, 'account')

  // The phone is signed out from the desk; its next page load goes to sign-in.
  const phoneRow = desk.page.locator('.session-list li', { hasText: 'Signed in by email code' }).filter({
    hasNot: desk.page.locator('.this-device'),
  })
  await phoneRow.getByRole('button', { name: /^Sign out/ }).click()
  await desk.page.getByRole('status').filter({ hasText: 'is signed out.' }).waitFor()
  await phone.page.reload()
  await phone.page.waitForURL(/\/chat\/sign-in/)

  // Everywhere: the script's session ends too, and this browser goes to sign-in.
  await desk.page.getByRole('button', { name: 'Sign out everywhere' }).click()
  await desk.page.waitForURL(/\/chat\/sign-in$/)
  const cookie = script.headers.getSetCookie()[0]!.split(';')[0]!
  const scriptNow = await fetch(`${system.url}/auth/v1/session`, { headers: { cookie } })
  assert.equal(scriptNow.status, 401)
  // The browser logs the refused key (400) as a failed request; nothing else went wrong.
  assert.deepEqual(
    desk.errors.filter((error) => !/status of 400 .*\/auth\/v1\/user-keys\)$/.test(error)),
    [],
  )
})
