import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, type TestContext, test } from 'node:test'
import { createTestDatabaseUrl } from '@atrium/platform/testing'
import { SERVICE_SECRET, startGateway } from '../../test/support.ts'
import { createTestCertificate, h1Request } from '../../test/tls.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'

// Two builds: the chat client's shape (no inline code) and an operator's app that bootstraps inline.
const root = mkdtempSync(join(tmpdir(), 'atrium-frontend-policy-'))
after(() => rmSync(root, { recursive: true, force: true }))
const INLINE_SCRIPT = '\n  window.boot = { at: Date.now() }\r\n'
function writeBuild(name: string, files: Record<string, string>): string {
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(join(root, name, path, '..'), { recursive: true })
    writeFileSync(join(root, name, path), body)
  }
  return join(root, name)
}
const chatBuild = writeBuild('chat', {
  'index.html': '<!doctype html><title>Chat</title><script src="/chat/assets/early-AbCd1234.js"></script>',
  'assets/early-AbCd1234.js': 'window.early = 1\n',
})
const adminBuild = writeBuild('admin', {
  'index.html': `<!doctype html><title>Admin</title><script>${INLINE_SCRIPT}</script><script src="/admin/app.js"></script>`,
  'app.js': 'console.log("admin")\n',
})
const APPS = { '/chat/': chatBuild, '/admin/': adminBuild }

/** A Content-Security-Policy as directive → its sources. */
function directives(policy: string | null): Map<string, string[]> {
  assert.ok(policy, 'a Content-Security-Policy header')
  return new Map(
    policy.split(';').map((directive) => {
      const [name = '', ...sources] = directive.trim().split(/\s+/)
      return [name, sources]
    }),
  )
}

async function startWithApps(t: TestContext, settings: Record<string, unknown> = {}) {
  const { Static, ...rest } = settings as { Static?: Record<string, unknown> }
  return startGateway(t, 'sqlite', { settings: { Static: { Apps: APPS, ...Static }, ...rest } })
}

test('the chat client runs only its own scripts and may use the camera and microphone', async (t) => {
  const { url } = await startWithApps(t)
  // The page, a client route falling back to it, and an asset: every file carries the policy.
  for (const path of ['/chat/', '/chat/c/42', '/chat/account', '/chat/assets/early-AbCd1234.js']) {
    const answer = await fetch(`${url}${path}`)
    assert.equal(answer.status, 200, path)
    const csp = directives(answer.headers.get('content-security-policy'))
    assert.deepEqual(csp.get('default-src'), ["'self'"], path)
    assert.deepEqual(csp.get('script-src'), ["'self'"], path)
    assert.deepEqual(csp.get('style-src'), ["'self'"], path)
    assert.deepEqual(csp.get('connect-src'), ["'self'"], path)
    assert.deepEqual(csp.get('media-src'), ["'self'", 'blob:'], path)
    assert.deepEqual(csp.get('object-src'), ["'none'"], path)
    assert.deepEqual(csp.get('base-uri'), ["'self'"], path)
    assert.deepEqual(csp.get('form-action'), ["'self'"], path)
    assert.deepEqual(csp.get('frame-ancestors'), ["'none'"], path)
    assert.equal(answer.headers.get('referrer-policy'), 'same-origin', path)
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', path)
    const features = answer.headers.get('permissions-policy') ?? ''
    for (const feature of ['camera', 'microphone', 'display-capture']) {
      assert.ok(features.split(', ').includes(`${feature}=(self)`), `${path}: ${features}`)
    }
    assert.ok(features.split(', ').includes('geolocation=()'), features)
    assert.equal(answer.headers.get('strict-transport-security'), null, 'no HSTS over plain HTTP')
  }
  // A revalidation answers 304 with the same policy.
  const first = await fetch(`${url}/chat/`)
  const again = await fetch(`${url}/chat/`, { headers: { 'if-none-match': first.headers.get('etag')! } })
  assert.equal(again.status, 304)
  assert.equal(again.headers.get('content-security-policy'), first.headers.get('content-security-policy'))
})

test('an operator’s app runs its inline scripts by their hashes and may not use the camera', async (t) => {
  const { url } = await startWithApps(t)
  const answer = await fetch(`${url}/admin/`)
  const csp = directives(answer.headers.get('content-security-policy'))
  // The browser hashes the script's text after the parser turned CR LF into LF.
  const hash = createHash('sha256').update(INLINE_SCRIPT.replace('\r\n', '\n')).digest('base64')
  assert.deepEqual(csp.get('script-src'), ["'self'", `'sha256-${hash}'`])
  assert.deepEqual(csp.get('style-src'), ["'self'", "'unsafe-inline'"])
  assert.deepEqual(csp.get('object-src'), ["'none'"])
  assert.deepEqual(csp.get('base-uri'), ["'self'"])
  assert.deepEqual(csp.get('frame-ancestors'), ["'none'"])
  assert.equal(answer.headers.get('referrer-policy'), 'strict-origin-when-cross-origin')
  const features = (answer.headers.get('permissions-policy') ?? '').split(', ')
  for (const feature of ['camera', 'microphone', 'display-capture']) assert.ok(features.includes(`${feature}=()`))
  const script = await fetch(`${url}/admin/app.js`)
  assert.equal(script.headers.get('content-security-policy'), answer.headers.get('content-security-policy'))
})

test('Static.FrameAncestors lets the named origins frame that frontend only', async (t) => {
  const shops = ['https://shop.example.com', 'http://localhost:3000']
  const { url } = await startWithApps(t, { Static: { FrameAncestors: { '/chat/': shops } } })
  const chat = directives((await fetch(`${url}/chat/support`)).headers.get('content-security-policy'))
  assert.deepEqual(chat.get('frame-ancestors'), shops)
  const admin = directives((await fetch(`${url}/admin/`)).headers.get('content-security-policy'))
  assert.deepEqual(admin.get('frame-ancestors'), ["'none'"])
})

test('Static.ContentSecurityPolicy replaces a frontend’s default, keeping frame-ancestors unless it names one', async (t) => {
  const own = "default-src 'self'; script-src 'self' 'unsafe-inline'"
  const framed = "default-src 'self'; frame-ancestors https://portal.example.com"
  const { url } = await startWithApps(t, {
    Static: { ContentSecurityPolicy: { '/admin/': `${own};`, '/chat/': framed } },
  })
  const admin = await fetch(`${url}/admin/`)
  assert.equal(admin.headers.get('content-security-policy'), `${own}; frame-ancestors 'none'`)
  const chat = await fetch(`${url}/chat/`)
  assert.equal(chat.headers.get('content-security-policy'), framed)
})

test('a gateway reached as pN of a domain lets the client probe p1, p2 and p3, and sends HSTS', async (t) => {
  const { url } = await startWithApps(t, { PublicOrigin: 'https://p2.example.com' })
  const answer = await fetch(`${url}/chat/`)
  const csp = directives(answer.headers.get('content-security-policy'))
  assert.deepEqual(csp.get('connect-src'), [
    "'self'",
    'https://p1.example.com',
    'https://p2.example.com',
    'https://p3.example.com',
  ])
  // Behind a proxy that ends TLS the browser still reaches the gateway over HTTPS.
  assert.equal(answer.headers.get('strict-transport-security'), 'max-age=31536000')
  const admin = directives((await fetch(`${url}/admin/`)).headers.get('content-security-policy'))
  assert.deepEqual(admin.get('connect-src'), undefined, 'an operator’s app keeps default-src')
})

test('a gateway with TLS of its own sends HSTS on every frontend', async (t) => {
  const { certFile, keyFile, cert } = await createTestCertificate(t)
  const config = loadGatewayConfig(
    {
      GatewayDB: await createTestDatabaseUrl(t, 'sqlite'),
      ServiceSecret: SERVICE_SECRET,
      Tls: { CertFile: certFile, KeyFile: keyFile },
      Static: { Apps: APPS },
    },
    {},
  )
  const app = await buildGateway(config)
  t.after(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  for (const path of ['/chat/', '/admin/app.js']) {
    const answer = await h1Request(`https://127.0.0.1:${port}${path}`, cert)
    assert.equal(answer.status, 200, path)
    assert.equal(answer.headers['strict-transport-security'], 'max-age=31536000', path)
  }
})

test('frame origins must be plain origins of mounted frontends', () => {
  const load = (Static: Record<string, unknown>) =>
    loadGatewayConfig({ ServiceSecret: SERVICE_SECRET, Static: { Apps: APPS, ...Static } }, {})
  for (const origin of [
    'https://shop.example.com/path',
    "https://a.example 'unsafe-inline'",
    '*',
    'shop.example.com',
  ]) {
    assert.throws(() => load({ FrameAncestors: { '/chat/': [origin] } }), /Static\.FrameAncestors/, origin)
  }
  assert.throws(
    () => load({ FrameAncestors: { '/other/': ['https://shop.example.com'] } }),
    /Static\.FrameAncestors: "\/other\/" is not a mount of Static\.Apps/,
  )
  assert.throws(
    () => load({ ContentSecurityPolicy: { '/chat/': "default-src 'self'\r\nX-Injected: 1" } }),
    /Static\.ContentSecurityPolicy/,
  )
})
