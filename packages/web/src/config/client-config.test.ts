import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { DEFAULT_CONFIG, featuresOf, loadClientConfig, parseClientConfig } from './client-config.ts'

test('a full configuration is read as given', () => {
  const { config, problems } = parseClientConfig({
    mode: 'support',
    contexts: { messenger: true, support: true, fileBrowser: false },
    support: { teamCrmIds: [1001, '1002'], welcomeMessage: 'Hello! How can we help?' },
    feedback: { types: [1, 4], ratingScale: 5 },
    files: { chunkSize: 1024 * 1024 },
  })
  assert.deepEqual(problems, [])
  assert.deepEqual(config, {
    mode: 'support',
    contexts: { messenger: true, support: true, feedback: false, calls: false, fileBrowser: false },
    support: { teamCrmIds: ['1001', '1002'], welcomeMessage: 'Hello! How can we help?' },
    feedback: { types: [1, 4], ratingScale: 5 },
    files: { chunkSize: 1024 * 1024 },
  })
})

test('wrong fields fall back to their defaults and are reported one by one', () => {
  const { config, problems } = parseClientConfig({
    mode: 'everything',
    contexts: { calls: 'yes', video: true },
    support: { teamCrmIds: ['alice'], welcomeMessage: 7 },
    feedback: { types: [0], ratingScale: 10 },
    files: { chunkSize: 1000 },
  })
  assert.equal(config.mode, 'full')
  assert.deepEqual(config.support, DEFAULT_CONFIG.support)
  assert.deepEqual(config.feedback, DEFAULT_CONFIG.feedback)
  assert.equal(config.contexts.calls, true)
  assert.deepEqual(problems, [
    'mode: "everything" is not one of support, feedback, full',
    'contexts.calls: not a boolean',
    'contexts.video: unknown context',
    'support.teamCrmIds: not an array of CRM ids',
    'support.welcomeMessage: not a string',
    'feedback.types: not an array of positive integers',
    'feedback.ratingScale: only 5 (1–5 stars) is supported',
    'files.chunkSize: not a whole number of bytes of at least 65536',
  ])
  assert.equal(config.files.chunkSize, 5 * 1024 * 1024)
  assert.deepEqual(parseClientConfig([1]).problems, ['the configuration is not a JSON object'])
})

test('each mode shows what the spec gives it, and contexts only turn things off', () => {
  const features = (raw: object) => featuresOf(parseClientConfig(raw).config)
  assert.deepEqual(features({ mode: 'support' }), {
    messenger: true,
    allChats: false,
    channels: false,
    support: true,
    feedback: false,
    calls: false,
    fileBrowser: false,
  })
  assert.deepEqual(features({ mode: 'feedback' }), {
    messenger: true,
    allChats: true,
    channels: false,
    support: false,
    feedback: true,
    calls: false,
    fileBrowser: false,
  })
  assert.deepEqual(features({ mode: 'full' }), {
    messenger: true,
    allChats: true,
    channels: true,
    support: false,
    feedback: true,
    calls: true,
    fileBrowser: true,
  })
  // A context the mode does not offer stays off; one it offers can be turned off.
  assert.equal(features({ mode: 'support', contexts: { calls: true } }).calls, false)
  assert.equal(features({ mode: 'full', contexts: { calls: false } }).calls, false)
})

test('config.json is loaded over HTTP; a missing file means the defaults, a broken one is reported', async (t) => {
  const files: Record<string, [number, string]> = {
    '/chat/config.json': [200, JSON.stringify({ mode: 'feedback' })],
    '/broken/config.json': [200, '{"mode": '],
  }
  const server = createServer((request, response) => {
    const [status, body] = files[request.url ?? ''] ?? [404, '{"error":{"code":1004,"message":"no file"},"id":"x"}']
    response.writeHead(status, { 'content-type': 'application/json' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => server.close())
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const loaded = await loadClientConfig(`${base}/chat/config.json`)
  assert.equal(loaded.config.mode, 'feedback')
  assert.deepEqual(loaded.problems, [])
  assert.deepEqual(await loadClientConfig(`${base}/missing/config.json`), { config: DEFAULT_CONFIG, problems: [] })
  const broken = await loadClientConfig(`${base}/broken/config.json`)
  assert.equal(broken.config, DEFAULT_CONFIG)
  assert.match(broken.problems[0]!, /is not a JSON configuration/)
})
