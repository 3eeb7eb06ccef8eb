/**
 * First render of the chat web client (issues 6 and 16): `npm exec -- node bench/web-render.ts [--loads 20]`.
 * Starts the system as the browser tests do (gateway serving a fresh build, chat module, SMTP sink),
 * seeds a group with 50 messages, then opens /chat/c/{id} cold (a new browser context each time:
 * empty cache, same session) and measures from navigation start to the 50th message in the DOM.
 * Two cases: the chat opened for the first time in this browser (its first page waits for the chat
 * list), and reopened (a reload or a link to a chat opened before: the page is asked for at once).
 * Also reports the JavaScript /chat/ loads at start (the start-up script included), gzip.
 * Budget: first render under 300 ms; initial JavaScript at most 60 KB gzip.
 */
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { type Browser, chromium } from 'playwright-core'
import { CHROMIUM, CHROMIUM_FLAGS, type Cleanups, signInByEmail, startSystem } from '../packages/web/src/e2e/system.ts'

const MESSAGES = 50
const RENDER_BUDGET_MS = 300
const INITIAL_JS_BUDGET = 60 * 1024

const { values } = parseArgs({ options: { loads: { type: 'string', default: '20' } } })
const loads = Number(values.loads)

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/**
 * The JavaScript index.html runs at start (the start-up script, the entry and its modulepreloads),
 * gzip level 9, in bytes.
 */
async function initialJsGzip(url: string): Promise<{ files: number; bytes: number }> {
  const index = await (await fetch(`${url}/chat/`)).text()
  const paths = [...index.matchAll(/<(?:script|link rel="modulepreload")[^>]*(?:src|href)="([^"]+)"/g)]
  const inline = [...index.matchAll(/<script>([^<]+)<\/script>/g)].map((match) => match[1]!)
  let bytes = inline.reduce((sum, script) => sum + gzipSync(script, { level: 9 }).length, 0)
  for (const [, path] of paths)
    bytes += gzipSync(Buffer.from(await (await fetch(`${url}${path}`)).arrayBuffer()), { level: 9 }).length
  return { files: paths.length + inline.length, bytes }
}

/**
 * Signs in, creates a group and posts the messages through the page's own session (CSRF token from
 * /auth/v1/session); returns the browser state before and after the chat was opened once.
 */
async function seed(browser: Browser, system: Awaited<ReturnType<typeof startSystem>>) {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`${system.url}/chat/sign-in`)
  await signInByEmail(page, system, 'bench@example.com')
  const chatId = await page.evaluate(async (count) => {
    const { result: session } = (await (await fetch('/auth/v1/session')).json()) as { result: { csrf: string } }
    async function post(operation: string, body: object) {
      const response = await fetch(`/msg/v1/${operation}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf },
        body: JSON.stringify(body),
      })
      return ((await response.json()) as { result: { chat: { id: string } } }).result
    }
    const { chat } = await post('create_chat', { type: 2, name: 'Render bench' })
    for (let i = 1; i <= count; i++) {
      await post('send_message', {
        chat_id: chat.id,
        content: `Message ${i}: ${'lorem ipsum dolor sit amet '.repeat(1 + (i % 4))}`,
      })
    }
    return chat.id as string
  }, MESSAGES)
  const firstOpen = await context.storageState()
  await page.goto(`${system.url}/chat/c/${chatId}`)
  await page
    .locator('.messages > li.message')
    .nth(MESSAGES - 1)
    .waitFor()
  const reopened = await context.storageState()
  await context.close()
  return { chatId, firstOpen, reopened }
}

/** Requests on the way to the first render, by the end of their response (ms after navigation start). */
const STAGES = {
  script: /\/chat\/assets\/index-[^/]*\.js$/,
  session: /\/auth\/v1\/session$/,
  chats: /\/get_chats/,
  messages: /\/get_chat_messages/,
}
type Stage = keyof typeof STAGES

/** One cold load: a new context (empty cache) with the session; ms from navigation start to the 50th message. */
async function coldLoad(browser: Browser, url: string, storageState: Awaited<ReturnType<typeof seed>>['firstOpen']) {
  const context = await browser.newContext({ storageState, viewport: { width: 1100, height: 760 } })
  // Runs in the page before its scripts (the root project has no DOM types, hence the text).
  await context.addInitScript(`
    const observer = new MutationObserver(() => {
      if (document.querySelectorAll('.messages > li.message').length < ${MESSAGES}) return
      window.firstRender = performance.now()
      observer.disconnect()
    })
    observer.observe(document, { childList: true, subtree: true })
  `)
  const page = await context.newPage()
  await page.goto(url)
  await page.waitForFunction('window.firstRender !== undefined', undefined, { timeout: 10_000 })
  const ms = await page.evaluate<number>('window.firstRender')
  const entries = await page.evaluate<Array<{ name: string; end: number }>>(
    `performance.getEntriesByType('resource').map((entry) => ({ name: entry.name, end: entry.responseEnd }))`,
  )
  const stages = Object.fromEntries(
    Object.entries(STAGES).map(([stage, pattern]) => [
      stage,
      entries.find((entry) => pattern.test(entry.name))?.end ?? NaN,
    ]),
  ) as Record<Stage, number>
  await context.close()
  return { ms, stages }
}

/** `loads` cold loads after one uncounted warm-up (server JIT, the browser process). */
async function measure(browser: Browser, url: string, storageState: Awaited<ReturnType<typeof seed>>['firstOpen']) {
  await coldLoad(browser, url, storageState)
  const runs: Array<Awaited<ReturnType<typeof coldLoad>>> = []
  for (let i = 0; i < loads; i++) runs.push(await coldLoad(browser, url, storageState))
  const times = runs.map((run) => run.ms).sort((a, b) => a - b)
  const stageMedians = Object.keys(STAGES).map((stage) => {
    const ends = runs.map((run) => run.stages[stage as Stage]).sort((a, b) => a - b)
    return `${stage} ${percentile(ends, 50).toFixed(0)} ms`
  })
  return { p50: percentile(times, 50), p95: percentile(times, 95), max: times.at(-1)!, stages: stageMedians.join(', ') }
}

const cleanups: Array<() => unknown> = []
const scope: Cleanups = { after: (fn) => void (fn && cleanups.push(fn as () => unknown)) }
try {
  const system = await startSystem(scope)
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS })
  cleanups.unshift(() => browser.close())
  const { chatId, firstOpen, reopened } = await seed(browser, system)
  const url = `${system.url}/chat/c/${chatId}`
  const cases = {
    'first open': await measure(browser, url, firstOpen),
    reopened: await measure(browser, url, reopened),
  }
  const js = await initialJsGzip(system.url)
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Chromium ${browser.version()}`)
  for (const [name, { p50, p95, max, stages }] of Object.entries(cases)) {
    console.log(
      `${name}: first render of ${MESSAGES} messages, ${loads} cold loads: p50 ${p50.toFixed(0)} ms, p95 ${p95.toFixed(0)} ms, max ${max.toFixed(0)} ms` +
        ` (budget < ${RENDER_BUDGET_MS} ms at p95 ${p95 < RENDER_BUDGET_MS ? 'met' : 'NOT met'})`,
    )
    console.log(`  median response end: ${stages}`)
  }
  console.log(
    `initial JavaScript: ${js.files} file(s), ${(js.bytes / 1024).toFixed(1)} KB gzip ` +
      `(budget ≤ 60 KB ${js.bytes <= INITIAL_JS_BUDGET ? 'met' : 'NOT met'})`,
  )
} finally {
  for (const cleanup of cleanups) await cleanup()
}
