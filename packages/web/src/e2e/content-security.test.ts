import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import type { Frame, Page } from 'playwright-core'
import { createGroup, send, setDisplayName } from './steps.ts'
import { clientBuild, launchBrowser, openPage, signInByEmail, startSystem } from './system.ts'

/*
 * The chat client under the policy the gateway serves it with (docs/serving.md, "Frontend
 * policies"): it runs without a single CSP violation, and a page of another origin cannot frame it
 * unless Static.FrameAncestors names that origin.
 */

/** Collects every CSP violation the page reports, as events and as console messages. */
async function watchViolations(page: Page): Promise<string[]> {
  const violations: string[] = []
  await page.exposeBinding('reportViolation', (_source, text: string) => void violations.push(`event: ${text}`))
  // Init scripts come from the browser's debugging protocol, which the page's CSP does not govern.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      const report = (window as unknown as { reportViolation: (text: string) => void }).reportViolation
      report(
        `${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} (${event.sourceFile}:${event.lineNumber})`,
      )
    })
  })
  page.on('console', (message) => {
    if (/Content Security Policy|Permissions-Policy|Refused to/i.test(message.text())) {
      violations.push(`console ${message.type()}: ${message.text()}`)
    }
  })
  return violations
}

/** A site on its own loopback port (another origin than the gateway) whose page frames `?src=`. */
async function startFramingSite(t: TestContext) {
  const server = createServer((request, response) => {
    const src = new URL(request.url ?? '/', 'http://site').searchParams.get('src') ?? ''
    response.setHeader('content-type', 'text/html; charset=utf-8')
    response.end(`<!doctype html><title>Shop</title><iframe src="${encodeURI(src)}" width="800" height="600"></iframe>`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => server.close(resolve)))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { origin, framing: (src: string) => `${origin}/?${new URLSearchParams({ src })}` }
}

/** The iframe of a page; `goto` has waited for the page's load, which waits for the frame's own. */
async function framedDocument(page: Page): Promise<Frame> {
  const frame = await (await page.waitForSelector('iframe')).contentFrame()
  assert.ok(frame, 'the iframe has a frame')
  return frame
}

test('the chat client signs in, chats and opens the account page without a CSP violation', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const { page, errors } = await openPage(browser)
  const violations = await watchViolations(page)

  const answer = await page.goto(`${system.url}/chat/`)
  const policy = answer?.headers()['content-security-policy'] ?? ''
  assert.match(policy, /(^|; )script-src 'self'(;|$)/, 'the page is served with its strict policy')
  assert.match(policy, /(^|; )frame-ancestors 'none'(;|$)/)
  await signInByEmail(page, system, 'csp@example.com')
  await setDisplayName(page, 'Casey Policy')
  await createGroup(page, 'Policy review')
  // Markdown loads its own chunk and renders links; the message list, the avatars and styles show.
  await send(page, 'Read **this** at [the docs](https://example.com/docs)', 'Read this at the docs')
  assert.equal(await page.locator('.message.mine strong', { hasText: 'this' }).count(), 1)

  // A reload takes the start-up requests of the early script (its own file, not inline code).
  await page.reload()
  await page.getByRole('heading', { name: 'Policy review' }).waitFor()
  assert.equal(await page.evaluate(() => window.atriumEarly instanceof Map), true, 'the early script ran')

  await page.getByText('Profile', { exact: true }).click()
  await page.getByRole('link', { name: 'Account and security' }).click()
  await page.getByRole('heading', { name: 'Account and security' }).waitFor()
  await page.locator('.session-list li.current').waitFor()

  // Calls may use the camera and microphone here, nothing else powerful (Chromium's view of the header).
  const features = await page.evaluate(() => {
    const policy = (document as unknown as { featurePolicy: { allowsFeature(name: string): boolean } }).featurePolicy
    return ['camera', 'microphone', 'display-capture', 'geolocation'].map((name) => policy.allowsFeature(name))
  })
  assert.deepEqual(features, [true, true, true, false])

  assert.deepEqual(violations, [])
  assert.deepEqual(errors, [])
})

test('a page of another origin cannot frame the client, unless Static.FrameAncestors names it', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const site = await startFramingSite(t)
  const strict = await startSystem(t)
  const allowing = await startSystem(t, 'sqlite', {
    Static: { Apps: { '/chat/': await clientBuild() }, FrameAncestors: { '/chat/': [site.origin] } },
  })

  const blocked = await openPage(browser)
  const refusals = await watchViolations(blocked.page)
  await blocked.page.goto(site.framing(`${strict.url}/chat/sign-in`))
  const blockedFrame = await framedDocument(blocked.page)
  // Chromium puts its error page in place of the refused document; the client never runs.
  assert.match(blockedFrame.url(), /^chrome-error:/)
  assert.equal(await blockedFrame.locator('#app').count(), 0)
  assert.ok(
    refusals.some((text) => /frame-ancestors 'none'/.test(text)),
    `the console names the refusal: ${refusals.join('\n')}`,
  )

  const framed = await openPage(browser)
  await framed.page.goto(site.framing(`${allowing.url}/chat/sign-in`))
  const frame = await framedDocument(framed.page)
  await frame.getByLabel('Email address').waitFor()
  assert.equal(new URL(frame.url()).origin, allowing.url)
})
