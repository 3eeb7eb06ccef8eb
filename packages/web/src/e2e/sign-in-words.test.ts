import assert from 'node:assert/strict'
import { test } from 'node:test'
import { launchBrowser, openPage, screenshot, startSystem } from './system.ts'

/** Wrong codes allowed before a challenge ends, set for this test. */
const MAX_ATTEMPTS = 3

/** A six-digit code that is not `code`. */
const wrong = (code: string, n: number) => String((Number(code) + n) % 1_000_000).padStart(6, '0')

test('sign-in failures are said in plain words, with what to do next', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t, 'sqlite', {
    Otp: { CodeTtlSeconds: 600, MaxAttempts: MAX_ATTEMPTS, MaxChallengesPerTargetPerHour: 5 },
  })
  const { page } = await openPage(browser)
  await page.goto(`${system.url}/chat/sign-in`)
  await page.getByLabel('Email address').fill('words@example.com')
  await page.getByRole('button', { name: 'Send code' }).click()
  await page.getByLabel('Sign-in code').waitFor()
  const first = await system.mailTo('words@example.com')

  // Each wrong code says how many tries are left, counted down from the limit this test set.
  const alert = page.getByRole('alert')
  for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
    await page.getByLabel('Sign-in code').fill(wrong(first.code, attempt))
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    const left = MAX_ATTEMPTS - attempt
    await alert
      .filter({ hasText: `That code is not right. ${left === 1 ? 'One try is' : `${left} tries are`} left.` })
      .waitFor()
  }
  // The last wrong code ends the challenge, and the words say so rather than "expired".
  await page.getByLabel('Sign-in code').fill(wrong(first.code, MAX_ATTEMPTS))
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await alert.filter({ hasText: 'Too many wrong codes: this one no longer works. Ask for a new code.' }).waitFor()
  await screenshot(page, 'sign-in-too-many-codes')
  // Even the right code no longer works now; the link of that mail neither.
  await page.getByLabel('Sign-in code').fill(first.code)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await alert.filter({ hasText: 'This code or link has expired or was already used. Ask for a new one.' }).waitFor()

  // A used-up link's page says what happened and leads back to sign-in.
  const other = await openPage(browser)
  await other.page.goto(first.link)
  await other.page.getByText('This sign-in link expired or was already used; ask for a new one.').waitFor()
  await screenshot(other.page, 'magic-link-expired')
  await other.page.getByRole('link', { name: 'Back to sign-in' }).click()
  await other.page.waitForURL(`${system.url}/chat/sign-in`)

  // A new code, as the words suggest, signs in. The mail can arrive before the page has the
  // answer: the answer is held here until the new code is typed, and the typing must survive it.
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  await page.route('**/auth/v1/email/start', async (route) => {
    const answer = await route.fetch()
    await held
    await route.fulfill({ response: answer })
  })
  await page.getByRole('button', { name: 'Send a new code' }).click()
  const second = await system.mailTo('words@example.com', first.count)
  assert.notEqual(second.code, '')
  await page.getByRole('button', { name: 'Sending a new code…' }).waitFor()
  await page.getByLabel('Sign-in code').fill(second.code)
  release()
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor()
  assert.equal(await page.getByLabel('Sign-in code').inputValue(), second.code, 'the typed code is kept')
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.getByTestId('my-crm-id').waitFor({ state: 'attached' })
})
