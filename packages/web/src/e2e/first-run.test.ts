import { join } from 'node:path'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { ROOT, type Started, startSystem } from '../../../../scripts/started-system.ts'
import { clientBuild, launchBrowser, openPage, screenshot } from './system.ts'

/** The code `npm start` printed for `target` (`[sign-in] <target>  code 123456 …`), waiting for it. */
async function printedCode(started: Started, target: string): Promise<string> {
  const line = new RegExp(`^\\[sign-in\\] ${target.replace(/[+.]/g, '\\$&')} {2}code (\\d{6})`, 'm')
  const deadline = Date.now() + 15_000
  for (;;) {
    const code = line.exec(started.output())?.[1]
    if (code) return code
    if (Date.now() > deadline) throw new Error(`no code printed for ${target}:\n${started.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function signInWithPrintedCode(page: Page, started: Started, label: string, target: string, printed = target) {
  await page.getByLabel(label).fill(target)
  await page.getByRole('button', { name: 'Send code' }).click()
  await page.getByLabel('Sign-in code').waitFor()
  await page.getByLabel('Sign-in code').fill(await printedCode(started, printed))
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.getByTestId('my-crm-id').waitFor({ state: 'attached' })
}

test('on a fresh start a newcomer opens / and signs in by the code npm start prints, by email and by phone', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  // The system exactly as `npm start` runs it (its own data directory and ports), serving the client.
  const started = await startSystem(t, join(ROOT, 'node_modules', '.bin', 'node'), ['scripts/start.ts'], {
    '/chat/': await clientBuild(),
  })
  const origin = `http://localhost:${started.port}`
  const { page, errors } = await openPage(browser)
  await page.goto(`${origin}/`)
  await page.waitForURL(`${origin}/chat/sign-in`)
  await signInWithPrintedCode(page, started, 'Email address', 'newcomer@example.com')
  await page.getByText('No chats yet').waitFor()
  await screenshot(page, 'first-run-signed-in')

  // Phone codes reach the development outbox and the terminal too, so phone sign-in works as well.
  // Signed out only once the stream is up: the messenger asks call/active when it comes up, and
  // that question would otherwise meet the revoked session on a slow machine (a 401 in the console).
  await page.locator('.live-status').waitFor({ state: 'detached' })
  await page.getByText('Profile', { exact: true }).click()
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByRole('button', { name: 'Phone', exact: true }).click()
  await signInWithPrintedCode(page, started, 'Phone number', '+49 170 1234567', '+491701234567')
  if (errors.length > 0) throw new Error(errors.join('\n'))
})
