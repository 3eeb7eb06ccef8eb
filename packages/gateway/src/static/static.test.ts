import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, type TestContext, test } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { createTestDatabaseUrl, sendRaw } from '@atrium/platform/testing'
import { SERVICE_SECRET, startGateway } from '../../test/support.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'

// A frontend build as Vite makes it, plus a secret beside it that no request may reach.
const root = mkdtempSync(join(tmpdir(), 'atrium-static-'))
after(() => rmSync(root, { recursive: true, force: true }))
const build = join(root, 'dist')
const files = {
  'index.html': Buffer.from(`<!doctype html><title>Chat</title>${'<p>welcome to the chat</p>\n'.repeat(60)}`),
  'assets/index-BK3pL7aQ.js': Buffer.from('export const greeting = "hello";\n'.repeat(400)),
  'assets/logo-a1B2c3D4.png': randomBytes(4096),
  'robots.txt': Buffer.from('User-agent: *\n'),
  'manifest.json': Buffer.from(JSON.stringify({ name: 'Atrium chat', icons: Array(40).fill({ src: 'icon.png' }) })),
}
for (const [path, body] of Object.entries(files)) {
  mkdirSync(join(build, path, '..'), { recursive: true })
  writeFileSync(join(build, path), body)
}
writeFileSync(join(build, '.env'), 'SECRET=dotfile-secret\n')
writeFileSync(join(root, 'secret.txt'), 'outside-the-build-secret\n')

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** A request sent with its path exactly as written (no normalising) and the body as bytes. */
function get(base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
    req.end()
  })
}

async function startWithBuild(t: TestContext) {
  return startGateway(t, 'sqlite', { settings: { Static: { Apps: { '/chat/': build } } } })
}

test('a file is served from memory with its type, a strong ETag and the caching rule of its name', async (t) => {
  const { url } = await startWithBuild(t)
  const script = await get(url, '/chat/assets/index-BK3pL7aQ.js')
  assert.equal(script.status, 200)
  assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8')
  assert.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable')
  assert.match(String(script.headers.etag), /^"[A-Za-z0-9_-]{27}"$/)
  assert.equal(script.headers['content-encoding'], undefined)
  assert.deepEqual(script.body, files['assets/index-BK3pL7aQ.js'])

  const page = await get(url, '/chat/index.html')
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8')
  assert.equal(page.headers['cache-control'], 'no-cache')
  const robots = await get(url, '/chat/robots.txt')
  assert.equal(robots.headers['cache-control'], 'no-cache')
  assert.deepEqual(robots.body, files['robots.txt'])
  const logo = await get(url, '/chat/assets/logo-a1B2c3D4.png')
  assert.equal(logo.headers['content-type'], 'image/png')
  assert.deepEqual(logo.body, files['assets/logo-a1B2c3D4.png'])
})

test('Accept-Encoding picks br, then gzip, then the original, and the bytes decode to the file', async (t) => {
  const { url } = await startWithBuild(t)
  const path = '/chat/assets/index-BK3pL7aQ.js'
  const original = files['assets/index-BK3pL7aQ.js']
  const cases: [string, string | undefined][] = [
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0, gzip;q=0.5', 'gzip'],
    ['*', 'br'],
    ['*, br;q=0', 'gzip'],
    ['identity', undefined],
    ['gzip;q=0, br;q=0', undefined],
  ]
  const etags = new Set<string>()
  for (const [accept, expected] of cases) {
    const answer = await get(url, path, { 'accept-encoding': accept })
    assert.equal(answer.headers['content-encoding'], expected, accept)
    assert.equal(answer.headers.vary, 'Accept-Encoding')
    const decoded =
      expected === 'br'
        ? brotliDecompressSync(answer.body)
        : expected === 'gzip'
          ? gunzipSync(answer.body)
          : answer.body
    assert.deepEqual(decoded, original, accept)
    if (expected) assert.ok(answer.body.length < original.length)
    etags.add(String(answer.headers.etag))
  }
  assert.equal(etags.size, 3, 'each encoding is its own representation with its own ETag')
})

test('tiny files and already-compressed types are never compressed', async (t) => {
  const { url } = await startWithBuild(t)
  for (const path of ['/chat/robots.txt', '/chat/assets/logo-a1B2c3D4.png']) {
    const answer = await get(url, path, { 'accept-encoding': 'br, gzip' })
    assert.equal(answer.headers['content-encoding'], undefined, path)
    assert.equal(answer.headers.vary, undefined, path)
  }
})

test('If-None-Match with the current ETag answers 304 without a body; another ETag gets the file', async (t) => {
  const { url } = await startWithBuild(t)
  const first = await get(url, '/chat/index.html', { 'accept-encoding': 'br' })
  const etag = String(first.headers.etag)
  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const again = await get(url, '/chat/index.html', { 'accept-encoding': 'br', 'if-none-match': ifNoneMatch })
    assert.equal(again.status, 304, ifNoneMatch)
    assert.equal(again.body.length, 0)
    assert.equal(again.headers.etag, etag)
    assert.equal(again.headers['cache-control'], 'no-cache')
  }
  const changed = await get(url, '/chat/index.html', { 'accept-encoding': 'br', 'if-none-match': '"stale"' })
  assert.equal(changed.status, 200)
  const otherEncoding = await get(url, '/chat/index.html', { 'accept-encoding': 'gzip', 'if-none-match': etag })
  assert.equal(otherEncoding.status, 200, 'the br ETag does not validate the gzip representation')
})

test('HEAD answers the headers of GET without a body', async (t) => {
  const { url } = await startWithBuild(t)
  const head = await get(url, '/chat/assets/index-BK3pL7aQ.js', { 'accept-encoding': 'gzip' }, 'HEAD')
  const full = await get(url, '/chat/assets/index-BK3pL7aQ.js', { 'accept-encoding': 'gzip' })
  assert.equal(head.status, 200)
  assert.equal(head.body.length, 0)
  for (const name of ['content-type', 'content-encoding', 'etag', 'cache-control', 'content-length']) {
    assert.equal(head.headers[name], full.headers[name], name)
  }
})

test('client routes fall back to index.html, missing assets are NotFound, the bare mount redirects', async (t) => {
  const { url } = await startWithBuild(t)
  for (const path of ['/chat/', '/chat/c/42', '/chat/support', '/chat/files/7/', '/chat/?code=abc']) {
    const answer = await get(url, path)
    assert.equal(answer.status, 200, path)
    assert.deepEqual(answer.body, files['index.html'], path)
    assert.equal(answer.headers['cache-control'], 'no-cache')
  }
  const missing = await get(url, '/chat/assets/gone-AbC12345.js')
  assert.equal(missing.status, 404)
  assert.equal(JSON.parse(missing.body.toString()).error.code, 1004)
  const redirect = await get(url, '/chat?code=invite-1')
  assert.equal(redirect.status, 301)
  assert.equal(redirect.headers.location, '/chat/?code=invite-1')
})

test('no request path reaches a file outside the build or a dotfile', async (t) => {
  const { url } = await startWithBuild(t)
  const attacks = [
    '/chat/../secret.txt',
    '/chat/%2e%2e/secret.txt',
    '/chat/%2E%2E%2Fsecret.txt',
    '/chat/..%2fsecret.txt',
    '/chat/..\\secret.txt',
    '/chat/%5c..%5csecret.txt',
    '/chat/assets/../../secret.txt',
    '/chat//../secret.txt',
    '/chat/.env',
    '/chat/%2eenv',
  ]
  for (const path of attacks) {
    const answer = await get(url, path)
    const text = answer.body.toString()
    assert.doesNotMatch(text, /outside-the-build-secret|dotfile-secret/, path)
    // Either an envelope error or, for a path without an extension, the app's own index.html.
    if (answer.status === 200) assert.deepEqual(answer.body, files['index.html'], path)
    else assert.equal(typeof JSON.parse(text).error.code, 'number', `${path} answered ${answer.status}`)
  }
  const raw = await sendRaw(url, 'GET /chat/../../secret.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
  assert.doesNotMatch(raw, /outside-the-build-secret/)
})

test('frontend routes take precedence over a proxy route for the same prefix', async (t) => {
  const { url, store } = await startWithBuild(t)
  // Nothing listens on port 9: a request that reached the proxy would answer BadGateway.
  await store.routes.add({ prefix: '/chat/', upstream: 'http://127.0.0.1:9' })
  const answer = await get(url, '/chat/assets/index-BK3pL7aQ.js')
  assert.equal(answer.status, 200)
  assert.deepEqual(answer.body, files['assets/index-BK3pL7aQ.js'])
})

test('a missing build directory is skipped and the gateway still starts', async (t) => {
  const { url } = await startGateway(t, 'sqlite', {
    settings: { Static: { Apps: { '/chat/': join(root, 'not-built-yet') } } },
  })
  assert.equal((await get(url, '/auth/v1/health')).status, 200)
  assert.equal((await get(url, '/chat/')).status, 404)
})

test('a build over Static.MaxBytes, originals or with compressed copies, is a startup error naming it', async (t) => {
  const originals = Object.values(files).reduce((sum, body) => sum + body.length, 0)
  // The first bound is below the originals; the second fits them but not their br and gzip copies.
  for (const maxBytes of [10_000, originals + 10]) {
    const config = loadGatewayConfig(
      {
        GatewayDB: await createTestDatabaseUrl(t, 'sqlite'),
        ServiceSecret: SERVICE_SECRET,
        Static: { Apps: { '/chat/': build }, MaxBytes: maxBytes },
      },
      {},
    )
    await assert.rejects(
      buildGateway(config),
      new RegExp(`Static\\.Apps /chat/ \\(.*dist\\) needs \\d+ bytes .*Static\\.MaxBytes \\(${maxBytes}\\)`),
    )
  }
})

test('mount paths must be plain paths outside the gateway’s own prefixes', () => {
  for (const mount of ['/', 'chat/', '/chat', '/../', '/a/./', '/auth/', '/private/x/']) {
    assert.throws(
      () => loadGatewayConfig({ ServiceSecret: SERVICE_SECRET, Static: { Apps: { [mount]: build } } }, {}),
      /Static\.Apps: .* is not a mount path/,
      mount,
    )
  }
  const config = loadGatewayConfig(
    { ServiceSecret: SERVICE_SECRET, Static: { Apps: { '/apps/admin-1.2/': build } } },
    {},
  )
  assert.deepEqual(Object.keys(config.Static.Apps), ['/apps/admin-1.2/'])
})
