import assert from 'node:assert/strict'
import crypto, { createHash } from 'node:crypto'
import { syncBuiltinESMExports } from 'node:module'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, json, listen, until } from '@atrium/platform/testing'
import { capturedLog, SERVICE_SECRET } from '../../test/support.ts'
import { downUpstreamUrl, startEchoUpstream } from '../../test/upstream.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'

/**
 * Records the buffers every `crypto.timingSafeEqual` call compares. Our modules import the function
 * by name, so the spy is synced into the ESM bindings of `node:crypto` (and restored after the test).
 */
function spyOnTimingSafeEqual(t: TestContext): [Buffer, Buffer][] {
  const calls: [Buffer, Buffer][] = []
  const original = crypto.timingSafeEqual
  t.mock.method(crypto, 'timingSafeEqual', (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    calls.push([Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)])
    return original(a, b)
  })
  syncBuiltinESMExports()
  t.after(() => {
    t.mock.restoreAll()
    syncBuiltinESMExports()
  })
  return calls
}

const sha256 = (text: string) => createHash('sha256').update(text).digest()

/** The public prefix and the secret of an `atr_<prefix 12>_<secret>` key (the secret may hold `_`). */
function partsOf(key: string) {
  return { prefix: key.slice(4, 16), secret: key.slice(17) }
}

/** A gateway with every log line kept, an echo route `/echo/` and a route `/down/` to a module that is down. */
async function startLogged(t: TestContext, dialect: DatabaseDialect) {
  const { lines, stream } = capturedLog()
  const upstream = await startEchoUpstream(t)
  const config = loadGatewayConfig(
    {
      GatewayDB: await createTestDatabaseUrl(t, dialect),
      ServiceSecret: SERVICE_SECRET,
      Modules: { echo: upstream.url, down: await downUpstreamUrl() },
      RateLimits: { ApiKey: { Requests: 8, WindowSeconds: 60 } },
    },
    {},
  )
  const app = await buildGateway(config, { logger: { level: 'trace', stream } })
  const url = await listen(t, app)
  await app.store.routes.add({ prefix: '/echo/', upstream: 'echo' })
  await app.store.routes.add({ prefix: '/down/', upstream: 'down' })
  return { url, store: app.store, config, lines }
}

forEachDialect('API keys and app secrets are compared as SHA-256 digests in constant time', async (t, dialect) => {
  const { store } = await startLogged(t, dialect)
  const { key } = await store.apiKeys.create({ keyType: 'user', crmId: 1, appId: 0, scopes: [], name: 'k' })
  const { prefix, secret } = partsOf(key)
  const wrongSecret = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`
  const { app, secret: appSecret } = await store.apps.create({ name: 'shop', owner: 1 })
  const calls = spyOnTimingSafeEqual(t)

  const cases: [string, () => Promise<unknown>, Buffer][] = [
    ['a key with a wrong secret', () => store.apiKeys.verify(`atr_${prefix}_${wrongSecret}`), sha256(wrongSecret)],
    ['a key with an unknown prefix', () => store.apiKeys.verify(`atr_${'z'.repeat(12)}_${secret}`), sha256(secret)],
    ['the right key', () => store.apiKeys.verify(key), sha256(secret)],
    ['a wrong app secret', () => store.apps.verify(app.id, 'wrong'), sha256('wrong')],
    ['an unknown app id', () => store.apps.verify(app.id + 1, appSecret), sha256(appSecret)],
  ]
  for (const [what, verify, presentedDigest] of cases) {
    calls.length = 0
    await verify()
    assert.equal(calls.length, 1, `${what}: one constant-time comparison, also when nothing was found`)
    const [a, b] = calls[0]!
    assert.deepEqual([a.length, b.length], [32, 32], `${what}: digests of equal length are compared`)
    assert.deepEqual(a, presentedDigest, `${what}: the presented secret is hashed, never compared raw`)
  }
  assert.equal((await store.apiKeys.verify(key))?.prefix, prefix)
  assert.equal(await store.apiKeys.verify(`atr_${prefix}_${wrongSecret}`), undefined)
})

forEachDialect('secrets never reach the log, the login audit or an error envelope', async (t, dialect) => {
  const gateway = await startLogged(t, dialect)
  const { store, url } = gateway
  const user = await store.users.create({ scopes: ['chat'] })
  const { key } = await store.apiKeys.create({ keyType: 'user', crmId: user.crm_id, appId: 0, scopes: [], name: 'k' })
  const { key: limitedKey } = await store.apiKeys.create({ keyType: 'user', crmId: 1, appId: 0, scopes: [], name: 'l' })
  const { token: sessionToken } = await store.sessions.create({
    crmId: user.crm_id,
    method: 't',
    ip: '',
    userAgent: '',
  })
  const { app, secret: appSecret } = await store.apps.create({ name: 'shop', owner: user.crm_id })
  const { prefix, secret } = partsOf(key)
  const guessed = `atr_${prefix}_${'G'.repeat(43)}`
  const cookie = `${gateway.config.Sessions.CookieName}=${sessionToken}`

  const bodies: string[] = []
  async function call(path: string, headers: Record<string, string>, body?: object) {
    const response = await fetch(`${url}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
      body: body && JSON.stringify(body),
    })
    bodies.push(await response.text())
    return response.status
  }

  const login = await fetch(`${url}/auth/v1/app/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ appId: String(app.id), secret: appSecret }),
  })
  const { token: appToken } = (await json(login)).result
  const credentials: Record<string, string>[] = [
    { 'x-api-key': key },
    { authorization: `Bearer ${key}` },
    { cookie },
    { authorization: `Bearer ${appToken}` },
  ]
  for (const headers of credentials) {
    assert.equal(await call('/echo/x', headers), 200)
    assert.equal(await call('/down/x', headers), 502)
    assert.equal(await call('/auth/v1/nothing-here', headers), 404)
  }
  assert.equal(await call('/auth/v1/session', { 'x-api-key': guessed }), 401)
  assert.equal(await call('/auth/v1/session', { authorization: `Basic ${key}` }), 401)
  assert.equal(await call('/auth/v1/session', { authorization: `Bearer ${key} ${secret}` }), 401)
  assert.equal(await call('/auth/v1/session', { cookie: `${cookie}x` }), 401)
  assert.equal(await call('/auth/v1/app/login', {}, { appId: String(app.id), secret: `${appSecret}x` }), 401)
  assert.equal(await call('/auth/v1/email/start', { 'x-api-key': key }, { email: 'a@example.com' }), 502)
  // The window is the clock's minute: start the nine with time to spare in it.
  await until(() => Date.now() % 60_000 < 50_000, 'a minute with 10 s left', 15_000)
  for (let i = 0; i < 8; i++) await call('/auth/v1/session', { 'x-api-key': limitedKey })
  assert.equal(await call('/auth/v1/session', { 'x-api-key': limitedKey }), 429)

  const secrets = { key, secret, limitedKey, guessed, sessionToken, appSecret, appToken }
  const log = gateway.lines.join('')
  const audit = JSON.stringify(await store.db.selectFrom('login_audit').selectAll().execute())
  assert.match(log, /upstream failed/, 'the log was captured, failures included')
  assert.match(audit, /app_login/)
  for (const [name, value] of Object.entries(secrets)) {
    assert.ok(!log.includes(value), `${name} is in the log`)
    assert.ok(!audit.includes(value), `${name} is in the login audit`)
    for (const body of bodies) assert.ok(!body.includes(value), `${name} is in a response: ${body}`)
  }
})
