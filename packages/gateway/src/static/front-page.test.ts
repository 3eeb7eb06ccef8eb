import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { startGateway } from '../../test/support.ts'
import { startEchoUpstream } from '../../test/upstream.ts'

const root = mkdtempSync(join(tmpdir(), 'atrium-front-page-'))
after(() => rmSync(root, { recursive: true, force: true }))
const build = join(root, 'chat')
mkdirSync(build)
writeFileSync(join(build, 'index.html'), '<!doctype html><title>Chat</title>')

test('/ leads to the chat client when it is mounted', async (t) => {
  const { url } = await startGateway(t, 'sqlite', { settings: { Static: { Apps: { '/chat/': build } } } })
  const answer = await fetch(`${url}/`, { redirect: 'manual' })
  assert.equal(answer.status, 302)
  assert.equal(answer.headers.get('location'), '/chat/')
  const followed = await fetch(`${url}/`)
  assert.equal(followed.url, `${url}/chat/`)
  assert.match(await followed.text(), /<title>Chat<\/title>/)
})

test('without a built client / is a start page that says what to build', async (t) => {
  const missing = join(root, 'not-built')
  const { url } = await startGateway(t, 'sqlite', { settings: { Static: { Apps: { '/chat/': missing } } } })
  const answer = await fetch(`${url}/`)
  assert.equal(answer.status, 200)
  assert.equal(answer.headers.get('content-type'), 'text/html; charset=utf-8')
  assert.match(answer.headers.get('content-security-policy') ?? '', /default-src 'none'.*; frame-ancestors 'none'$/)
  assert.equal(answer.headers.get('referrer-policy'), 'same-origin')
  const page = await answer.text()
  assert.match(page, /Atrium is running/)
  assert.ok(page.includes(`<code>${missing}</code> is not built yet`), page)
  assert.match(page, /href="\/auth\/v1\/health"/)
})

test('the favicon is an icon of its own with its type, a validator and a day of caching', async (t) => {
  const { url } = await startGateway(t, 'sqlite')
  const ico = await fetch(`${url}/favicon.ico`)
  assert.equal(ico.status, 200)
  assert.equal(ico.headers.get('content-type'), 'image/x-icon')
  assert.equal(ico.headers.get('cache-control'), 'public, max-age=86400')
  const bytes = Buffer.from(await ico.arrayBuffer())
  // An ICO header (reserved 0, type 1, one image) whose image is a 32×32 PNG.
  assert.deepEqual([...bytes.subarray(0, 6)], [0, 0, 1, 0, 1, 0])
  assert.equal(bytes.subarray(23, 26).toString('latin1'), 'PNG')
  assert.equal(bytes.readUInt32BE(22 + 16), 32)

  const again = await fetch(`${url}/favicon.ico`, { headers: { 'if-none-match': ico.headers.get('etag')! } })
  assert.equal(again.status, 304)

  const svg = await fetch(`${url}/favicon.svg`)
  assert.equal(svg.headers.get('content-type'), 'image/svg+xml; charset=utf-8')
  assert.match(await svg.text(), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
})

test('a route for / in the route map keeps /, and other methods and paths stay NotFound', async (t) => {
  const upstream = await startEchoUpstream(t)
  const gateway = await startGateway(t, 'sqlite', { settings: { Modules: { site: upstream.url } } })
  const before = await fetch(`${gateway.url}/`, { method: 'POST', body: '{}' })
  assert.equal(before.status, 404)
  assert.equal(((await before.json()) as { error: { code: number } }).error.code, 1004)
  assert.equal((await fetch(`${gateway.url}/robots.txt`)).status, 404)

  await gateway.store.routes.add({ prefix: '/', upstream: 'site' })
  const routed = await fetch(`${gateway.url}/`)
  assert.equal(routed.status, 200)
  assert.equal(((await routed.json()) as { url: string }).url, '/')
  assert.equal(upstream.received.length, 1)
})
