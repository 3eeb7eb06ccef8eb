import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { createMigratedTestDatabaseUrl, freePort } from '@atrium/platform/testing'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { buildChat } from '../../../chat/src/app.ts'
import { loadChatConfig } from '../../../chat/src/config.ts'
import { chatMigrations } from '../../../chat/src/db/migrations/index.ts'
import { startSmtpPeer } from '../../../chat/test/smtp-peer.ts'
import { buildGateway } from '../../../gateway/src/app.ts'
import { loadGatewayConfig } from '../../../gateway/src/config.ts'
import { gatewayMigrations } from '../../../gateway/src/db/migrations/index.ts'
import { FAST_EVENTS } from '../../../gateway/test/events.ts'
import { SERVICE_SECRET } from '../../../gateway/test/support.ts'
import { buildClient, newestSourceChange, WEB_ROOT } from '../../build-client.ts'

/** Debian's Chromium; no browser is downloaded. */
export const CHROMIUM = '/usr/bin/chromium'
/** Flags of every headless run (tests and bench/web-render.ts): no GPU, no background traffic. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

/** Screenshots of the main screens, kept as CI artifacts (ignored by git). */
export const SCREENSHOTS = new URL('../../../../test-results/web/', import.meta.url).pathname

const SMTP = { username: 'web-e2e', password: 'smtp-password-for-browser-tests' }

let built: Promise<string> | undefined

/**
 * The client built once for every test process of a run: under the temporary directory, in a
 * folder named by when its sources last changed, so a run after a change builds it again and the
 * processes of one run share it. The first process to need it builds it in a folder of its own
 * and renames that into place; a process that loses the race uses the winner's and drops its own.
 */
export function clientBuild(): Promise<string> {
  built ??= (async () => {
    const root = join(
      tmpdir(),
      'atrium-web-e2e-builds',
      createHash('sha256').update(WEB_ROOT).digest('hex').slice(0, 12),
    )
    const shared = join(root, String(await newestSourceChange()))
    if (existsSync(join(shared, 'chat', 'index.html'))) return join(shared, 'chat')
    await mkdir(root, { recursive: true })
    const own = await mkdtemp(join(root, 'building-'))
    await buildClient(join(own, 'chat'))
    try {
      await rename(own, shared)
      // Builds of sources that changed since are of no more use.
      for (const name of await readdir(root)) {
        if (join(root, name) !== shared && !name.startsWith('building-')) {
          await rm(join(root, name), { recursive: true, force: true })
        }
      }
    } catch {
      await rm(own, { recursive: true, force: true })
    }
    return join(shared, 'chat')
  })()
  return built
}

/** A copy of the client build whose config.json is the shipped one with `changes` on top. */
async function configuredClient(t: TestContext, changes: Record<string, unknown>): Promise<string> {
  const built = await clientBuild()
  const dir = join(await mkdtemp(join(tmpdir(), 'atrium-web-e2e-config-')), 'chat')
  t.after(() => rm(dirname(dir), { recursive: true, force: true }))
  await cp(built, dir, { recursive: true })
  const shipped = JSON.parse(await readFile(join(built, 'config.json'), 'utf8'))
  await writeFile(join(dir, 'config.json'), JSON.stringify({ ...shipped, ...changes }))
  return dir
}

/** Where startSystem registers its cleanups: a test's context, or a benchmark's own list. */
export type Cleanups = Pick<TestContext, 'after'>

/**
 * The whole system on loopback ports: a gateway serving the freshly built client at /chat/ and
 * routing /msg/ to a chat module, whose mail (sign-in codes) goes to a real SMTP sink. Both keep
 * their data in fresh databases of `dialect`, the gateway its uploads in a fresh directory.
 * `gatewaySettings` adds to the gateway's settings (e.g. `Files` limits), `chatSettings` to the
 * chat module's (e.g. `Support`).
 */
export async function startSystem(
  cleanups: Cleanups,
  dialect: DatabaseDialect = 'sqlite',
  gatewaySettings: Record<string, unknown> = {},
  clientConfig?: Record<string, unknown>,
  chatSettings: Record<string, unknown> = {},
  /** The host of the public origin: `localhost` where the browser needs a domain name (passkeys refuse IP addresses). */
  host = '127.0.0.1',
) {
  // The database and SMTP helpers take a TestContext but use only its after().
  const t = cleanups as TestContext
  // After-hooks run in the order they were added: the gateway stops first, then the chat module
  // cuts the connections the gateway's pollers left open (else it waits out their keep-alive).
  let stop = async () => {}
  t.after(() => stop())
  const clientDir = clientConfig ? await configuredClient(t, clientConfig) : await clientBuild()
  const files = await mkdtemp(join(tmpdir(), 'atrium-web-e2e-files-'))
  t.after(() => rm(files, { recursive: true, force: true }))
  const smtp = await startSmtpPeer(t, SMTP)
  const chatConfig = loadChatConfig(
    {
      ChatDB: await createMigratedTestDatabaseUrl(t, dialect, chatMigrations),
      ServiceSecret: SERVICE_SECRET,
      SmtpSettings: { Host: '127.0.0.1', Port: smtp.port, Username: SMTP.username, Password: SMTP.password },
      ...chatSettings,
    },
    {},
  )
  const chatApp = await buildChat(chatConfig, { logger: { level: 'error' } })
  await chatApp.listen({ host: '127.0.0.1', port: 0 })
  // `database`: the chat module's ChatDB, for tests that check what it stored or write rows the
  // API cannot (messages sent days ago).
  const chat = {
    base: `http://127.0.0.1:${(chatApp.server.address() as AddressInfo).port}`,
    database: chatConfig.ChatDB,
  }
  // The browser's Origin must be PublicOrigin (CSRF check), so the port is chosen before the gateway starts.
  const port = await freePort()
  const url = `http://${host}:${port}`
  const config = loadGatewayConfig(
    {
      GatewayDB: await createMigratedTestDatabaseUrl(t, dialect, gatewayMigrations),
      ServiceSecret: SERVICE_SECRET,
      PublicOrigin: url,
      Modules: { chat: chat.base },
      Proxy: { Routes: [{ Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] }] },
      Static: { Apps: { '/chat/': clientDir } },
      Events: FAST_EVENTS,
      LocalFileStoragePath: files,
      ...gatewaySettings,
    },
    {},
  )
  const gateway = await buildGateway(config)
  stop = async () => {
    await gateway.close()
    const closing = chatApp.close()
    chatApp.server.closeAllConnections()
    await closing
  }
  await gateway.listen({ host: '127.0.0.1', port })

  /** The code and magic link of the latest sign-in mail to `email`, waiting for it to arrive. */
  async function mailTo(email: string, after = 0) {
    const deadline = Date.now() + 10_000
    for (;;) {
      const mails = smtp.received.filter((mail) => mail.envelopeTo.includes(email))
      const text = mails.length > after ? (mails.at(-1)!.mail.text ?? '') : ''
      const code = /sign-in code is (\d{6})/.exec(text)?.[1]
      const link = /(http\S+\/auth\/v1\/magic\?token=\S+)/.exec(text)?.[1]
      if (code && link) return { code, link, count: mails.length }
      assert.ok(Date.now() < deadline, `no sign-in mail to ${email}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  return { url, smtp, chat, gateway, mailTo }
}

export type System = Awaited<ReturnType<typeof startSystem>>

/**
 * Headless Chromium (with `extraArgs` after the usual flags), or undefined after skipping the test
 * when it is not installed (unless ATRIUM_REQUIRE_BROWSER=1, as in CI, where a missing browser
 * fails the test).
 */
export async function launchBrowser(t: TestContext, extraArgs: string[] = []): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    const message = `Chromium is not installed at ${CHROMIUM} (apt-get install chromium)`
    if (process.env.ATRIUM_REQUIRE_BROWSER === '1') assert.fail(`${message}; ATRIUM_REQUIRE_BROWSER=1 requires it`)
    t.skip(message)
    return undefined
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_FLAGS, ...extraArgs],
  })
  t.after(() => browser.close())
  return browser
}

/** A page in its own browser context (own cookies and storage), with the console errors it logs. */
export async function openPage(browser: Browser, viewport = { width: 1100, height: 760 }) {
  const context: BrowserContext = await browser.newContext({ viewport, locale: 'en-GB', timezoneId: 'Europe/Berlin' })
  // Frames come late, as on a loaded machine: Preact runs effects after the next frame (or 100 ms),
  // so a step that depends on an effect having run (focus moved, a field filled) fails here at once
  // instead of now and then in CI.
  await context.addInitScript(`(() => {
    const frame = window.requestAnimationFrame.bind(window)
    window.requestAnimationFrame = (callback) => frame(() => setTimeout(() => callback(performance.now()), 300))
  })()`)
  const page: Page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    // Signed out, the start-up probe of GET /auth/v1/session answers 401 SessionRequired by design.
    const { url } = message.location()
    if (url.endsWith('/auth/v1/session') && message.text().includes('status of 401')) return
    // With Web Push off, the account page's probe of the VAPID key answers 404 PushDisabled by design.
    if (url.endsWith('/auth/v1/notifications/public_key') && message.text().includes('status of 404')) return
    errors.push(`console: ${message.text()} (${url})`)
  })
  return { context, page, errors }
}

/** Signs in on the sign-in page (already open) by the email code the SMTP sink received; returns the CRM id. */
export async function signInByEmail(page: Page, system: System, email: string): Promise<string> {
  const before = system.smtp.received.filter((mail) => mail.envelopeTo.includes(email)).length
  await page.getByLabel('Email address').fill(email)
  await page.getByRole('button', { name: 'Send code' }).click()
  await page.getByLabel('Sign-in code').waitFor()
  const { code } = await system.mailTo(email, before)
  await page.getByLabel('Sign-in code').fill(code)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  return (await page.getByTestId('my-crm-id').textContent()) ?? ''
}

/** Saves a screenshot of the page as test-results/web/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) })
}

/**
 * Chooses a person in a people picker (a combobox labelled `label`): types `text` (a name, a full
 * email, or a user id), waits for a matching option and presses Enter to take the first.
 */
export async function choosePerson(page: Page, label: string, text: string): Promise<void> {
  const input = page.getByRole('combobox', { name: label })
  await input.fill(text)
  await page.getByRole('listbox', { name: label }).getByRole('option').first().waitFor()
  await input.press('Enter')
}
