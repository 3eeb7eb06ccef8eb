import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, IDENTITY_HEADERS, RouteFlags, verifyHop } from '@atrium/platform'
import { forEachDialect, json, requestWithHeaders, sendRaw } from '@atrium/platform/testing'
import { SERVICE_SECRET, startGateway } from '../../test/support.ts'
import { type Received, startEchoUpstream } from '../../test/upstream.ts'

const PROJECT = 'atrium-test'

/** A gateway whose route /echo/ (and /locked/, RequireSession) goes to a real echo upstream. */
async function startProxied(t: TestContext, dialect: DatabaseDialect, proxy: Record<string, unknown> = {}) {
  const upstream = await startEchoUpstream(t)
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { echo: upstream.url }, Proxy: { Project: PROJECT, ...proxy } },
  })
  await gateway.store.routes.add({ prefix: '/echo/', upstream: 'echo' })
  await gateway.store.routes.add({ prefix: '/locked', upstream: 'echo', flags: RouteFlags.RequireSession })
  return { ...gateway, upstream }
}

async function signIn(gateway: Awaited<ReturnType<typeof startProxied>>, scopes = ['chat', 'files']) {
  const user = await gateway.store.users.create({ scopes })
  const { token, session } = await gateway.store.sessions.create({
    crmId: user.crm_id,
    method: 'email_otp',
    ip: '127.0.0.1',
    userAgent: 'test',
  })
  return { crmId: user.crm_id, csrf: session.csrf, cookie: `${gateway.config.Sessions.CookieName}=${token}` }
}

/** Header names a server folding `_` and `.` into `-` would read as one of the forbidden headers. */
function forbiddenLookAlikes(received: Received): string[] {
  const forbidden = new Set<string>([...IDENTITY_HEADERS, 'x-user-id', 'x-api-key', 'x-custom-hop'])
  return received.rawNames.filter((name) => {
    const folded = name.toLowerCase().replace(/[_.]/g, '-')
    return forbidden.has(folded) && !(IDENTITY_HEADERS as readonly string[]).includes(name.toLowerCase())
  })
}

const SPOOFED: Record<string, string> = {
  'X-Crm': '1',
  x_crm: '2',
  'X.Crm': '3',
  'X-CRM': '4',
  'X-Scopes': 'admin',
  X_Scopes: 'admin',
  'X-KeyType': 'service',
  'x.keytype': 'service',
  'X-AppId': '77',
  X_AppId: '77',
  'X-Pkey-Crm': '5',
  x_pkey_crm: '5',
  'X-Country': 'XX',
  'X.Country': 'XX',
  'X-Project': 'other',
  x_project: 'other',
  'X-User-Id': '6',
  x_user_id: '6',
  'X-Service-Auth': 'v1.0.forged',
  'X-Custom-Hop': 'dropped because Connection names it',
  Connection: 'keep-alive, X-Custom-Hop',
}

forEachDialect(
  'every spoofed identity header is removed and the identity comes from the session',
  async (t, dialect) => {
    const gateway = await startProxied(t, dialect)
    const { crmId, cookie } = await signIn(gateway)
    const response = await requestWithHeaders(`${gateway.url}/echo/v1/who?x=1`, {
      headers: {
        ...SPOOFED,
        Cookie: `theme=dark; ${cookie}; lang=en`,
        'X-Invite-Code': 'abc',
        'X-Device-Guid': 'dev-1',
      },
    })
    assert.equal(response.status, 200, response.body)
    const seen: Received = JSON.parse(response.body)
    assert.equal(seen.url, '/echo/v1/who?x=1')
    assert.equal(seen.headers['x-crm'], String(crmId))
    assert.equal(seen.headers['x-scopes'], 'chat files')
    assert.equal(seen.headers['x-keytype'], 'session')
    assert.equal(seen.headers['x-appid'], undefined, 'a user session has no app')
    assert.equal(seen.headers['x-pkey-crm'], undefined)
    assert.equal(seen.headers['x-country'], undefined, 'loopback has no country')
    assert.equal(seen.headers['x-project'], PROJECT)
    assert.equal(seen.headers['x-user-id'], undefined)
    assert.equal(seen.headers['x-custom-hop'], undefined)
    assert.deepEqual(forbiddenLookAlikes(seen), [])
    assert.equal(seen.headers.cookie, 'theme=dark; lang=en', 'the session cookie is removed, other cookies stay')
    assert.equal(seen.headers['x-invite-code'], 'abc')
    assert.equal(seen.headers['x-device-guid'], 'dev-1')
    assert.equal(seen.rawNames.filter((name) => name.toLowerCase() === 'x-crm').length, 1)
  },
)

forEachDialect('an anonymous caller reaches the module with no identity at all', async (t, dialect) => {
  const gateway = await startProxied(t, dialect)
  const response = await requestWithHeaders(`${gateway.url}/echo/x`, { headers: SPOOFED })
  const seen: Received = JSON.parse(response.body)
  for (const name of ['x-crm', 'x-scopes', 'x-keytype', 'x-appid', 'x-pkey-crm', 'x-country', 'x-user-id']) {
    assert.equal(seen.headers[name], undefined, name)
  }
  assert.deepEqual(forbiddenLookAlikes(seen), [])
  assert.equal(seen.headers['x-project'], PROJECT)
})

forEachDialect('API keys and bearer credentials are not passed on to the module', async (t, dialect) => {
  const gateway = await startProxied(t, dialect)
  const user = await gateway.store.users.create()
  const { key } = await gateway.store.apiKeys.create({
    keyType: 'user',
    crmId: user.crm_id,
    appId: 0,
    scopes: ['wallet'],
    name: 'k',
  })
  const viaHeader: Received = await json(await fetch(`${gateway.url}/echo/a`, { headers: { 'X-Api-Key': key } }))
  assert.equal(viaHeader.headers['x-api-key'], undefined)
  assert.equal(viaHeader.headers['x-keytype'], 'user')
  assert.equal(viaHeader.headers['x-crm'], String(user.crm_id))
  assert.equal(viaHeader.headers['x-scopes'], 'wallet')
  const viaBearer: Received = await json(
    await fetch(`${gateway.url}/echo/a`, { headers: { Authorization: `Bearer ${key}` } }),
  )
  assert.equal(viaBearer.headers.authorization, undefined)
  assert.equal(viaBearer.headers['x-crm'], String(user.crm_id))
})

forEachDialect('the hop signature verifies at the module; Host and forwarding headers are set', async (t, dialect) => {
  const gateway = await startProxied(t, dialect)
  const { cookie, csrf } = await signIn(gateway)
  const response = await requestWithHeaders(`${gateway.url}/echo/v1/send_message?chat=1`, {
    method: 'POST',
    headers: { Cookie: cookie, 'Content-Type': 'application/json', Host: 'localhost:9999', 'X-CSRF-Token': csrf },
    body: '{"content":"hi"}',
  })
  const seen: Received = JSON.parse(response.body)
  const hop = { method: seen.method, url: seen.url, headers: seen.headers }
  assert.equal(verifyHop(SERVICE_SECRET, hop), true, 'signed with the shared secret')
  assert.equal(verifyHop('another-secret'.padEnd(40, '-'), hop), false)
  assert.equal(verifyHop(SERVICE_SECRET, { ...hop, headers: { ...hop.headers, 'x-crm': '1' } }), false)
  assert.equal(seen.headers.host, 'localhost:9999', 'the original Host reaches the module')
  assert.equal(seen.headers['x-forwarded-host'], 'localhost:9999')
  assert.equal(seen.headers['x-forwarded-proto'], 'http')
  assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1')
  assert.equal(seen.body, '{"content":"hi"}')
  assert.equal(seen.headers['x-csrf-token'], undefined, 'the CSRF token stays at the gateway')
  assert.equal(seen.headers['content-type'], 'application/json')
})

forEachDialect('a large body streams intact both ways, whatever its content type', async (t, dialect) => {
  const gateway = await startProxied(t, dialect)
  const body = randomBytes(6 * 1024 * 1024)
  const response = await fetch(`${gateway.url}/echo/stream`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body,
  })
  assert.equal(response.status, 200)
  const back = Buffer.from(await response.arrayBuffer())
  assert.equal(back.length, body.length)
  assert.equal(createHash('sha256').update(back).digest('hex'), createHash('sha256').update(body).digest('hex'))
})

forEachDialect('a RequireSession route refuses anonymous callers before contacting the module', async (t, dialect) => {
  const gateway = await startProxied(t, dialect)
  const response = await fetch(`${gateway.url}/locked/v1/x`, { method: 'POST', body: 'x' })
  assert.equal(response.status, 401)
  assert.equal((await json(response)).error.code, 2003)
  assert.equal(gateway.upstream.received.length, 0)
  const { cookie } = await signIn(gateway)
  const allowed = await fetch(`${gateway.url}/locked/v1/x`, { headers: { Cookie: cookie } })
  assert.equal(allowed.status, 200)
  assert.equal(gateway.upstream.received.length, 1)
})

forEachDialect(
  'unrouted paths, /auth/ and /private/ never reach a module, even under a / route',
  async (t, dialect) => {
    const gateway = await startProxied(t, dialect)
    const unrouted = await fetch(`${gateway.url}/echox/1`)
    assert.equal(unrouted.status, 404)
    assert.equal((await json(unrouted)).error.code, 1004)
    await gateway.store.routes.add({ prefix: '/', upstream: 'echo' })
    for (const path of [
      '/private/v1/SendOTP',
      '/Private/v1/SendOTP',
      '/%70rivate/v1/SendOTP',
      '//private/v1/x',
      '/auth/v9/x',
    ]) {
      // The gateway's own /private/ API answers 401 to unsigned calls; nothing is proxied.
      const response = await fetch(`${gateway.url}${path}`, { method: 'POST' })
      assert.ok(response.status === 404 || response.status === 401, `${path}: ${response.status}`)
    }
    for (const path of ['/echo/%2e%2e/private/v1/x', '/echo/..%2fprivate/v1/x', '/echo/%5c..%5cprivate', '/echo/%zz']) {
      const response = await sendRaw(
        gateway.url,
        `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
      )
      assert.match(response, /^HTTP\/1.1 400/, path)
    }
    assert.equal(gateway.upstream.received.length, 0)
    assert.equal((await fetch(`${gateway.url}/anything`)).status, 200, 'the / route takes the rest')
  },
)

forEachDialect('oversized request headers get the 431 envelope through the gateway', async (t, dialect) => {
  const gateway = await startProxied(t, dialect)
  const answer = await sendRaw(
    gateway.url,
    `GET /echo/x HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
  )
  assert.match(answer, /^HTTP\/1.1 431/)
  assert.match(answer, /"code":1005/)
  assert.equal(gateway.upstream.received.length, 0)
})

forEachDialect('a module cannot set CORS headers or the gateway session cookie', async (t, dialect) => {
  const gateway = await startProxied(t, dialect)
  const response = await fetch(`${gateway.url}/echo/x`)
  assert.equal(response.headers.get('access-control-allow-origin'), null)
  assert.deepEqual(response.headers.getSetCookie(), ['module_pref=1; Path=/'])
  assert.ok(response.headers.get('x-request-id'))
})
