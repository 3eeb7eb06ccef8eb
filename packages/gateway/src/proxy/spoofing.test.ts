import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, errorCodes, IDENTITY_HEADERS } from '@atrium/platform'
import { forEachDialect, requestWithHeaders } from '@atrium/platform/testing'
import { startGateway } from '../../test/support.ts'
import { createTestCertificate, h2Connect, h2Request } from '../../test/tls.ts'
import { type Received, startEchoUpstream } from '../../test/upstream.ts'

// Attacks on the identity the gateway forwards (ARCHITECTURE.md "One request through the gateway",
// step 7) that proxy.test.ts does not try: HTTP/2, key and app callers, trailers, forwarding headers.

const PROJECT = 'atrium-test'

/** Header names the module must only ever get from the gateway, folded as lenient servers fold them. */
const GATEWAY_ONLY = new Set<string>([
  ...IDENTITY_HEADERS,
  'x-user-id',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'forwarded',
])

/** Raw header names of a request the module received that fold into a gateway-only name but are not it. */
function lookAlikes(seen: Received): string[] {
  return seen.rawNames.filter((name) => {
    const folded = name.toLowerCase().replace(/[_.]/g, '-')
    return GATEWAY_ONLY.has(folded) && name.toLowerCase() !== folded
  })
}

/** A gateway (HTTPS when `tls`) whose route /echo/ goes to a real echo upstream. */
async function startEcho(t: TestContext, dialect: DatabaseDialect, settings: Record<string, unknown> = {}) {
  const upstream = await startEchoUpstream(t)
  const gateway = await startGateway(t, dialect, {
    settings: {
      Modules: { echo: upstream.url },
      ...settings,
      Proxy: { Project: PROJECT, ...(settings.Proxy as object) },
    },
  })
  await gateway.store.routes.add({ prefix: '/echo/', upstream: 'echo' })
  return { ...gateway, upstream }
}

/** The spoofed identity and forwarding headers an HTTP/2 client can send (names are lower case in HTTP/2). */
const SPOOFED_H2: Record<string, string> = {
  'x-crm': '1',
  x_crm: '2',
  'x.crm': '3',
  'x-scopes': 'admin',
  x_scopes: 'admin',
  'x-keytype': 'service',
  'x.keytype': 'service',
  'x-appid': '77',
  x_appid: '77',
  'x-pkey-crm': '5',
  'x.pkey.crm': '5',
  'x-country': 'XX',
  x_country: 'XX',
  'x-project': 'other',
  'x.project': 'other',
  'x-user-id': '6',
  x_user_id: '6',
  'x-service-auth': 'v1.0.forged',
  'x-forwarded-for': '6.6.6.6',
  x_forwarded_for: '6.6.6.6',
  'x-forwarded-host': 'evil.example',
  'x-real-ip': '6.6.6.6',
}

forEachDialect('over HTTP/2 every spoofed identity header is removed and set from the session', async (t, dialect) => {
  const certificate = await createTestCertificate(t)
  const gateway = await startEcho(t, dialect, {
    Tls: { CertFile: certificate.certFile, KeyFile: certificate.keyFile },
  })
  const origin = gateway.url.replace('http:', 'https:')
  const user = await gateway.store.users.create({ scopes: ['chat'] })
  const { token } = await gateway.store.sessions.create({
    crmId: user.crm_id,
    method: 'email_otp',
    ip: '127.0.0.1',
    userAgent: 'test',
  })
  const session = await h2Connect(t, origin, certificate.cert)
  assert.equal(session.alpnProtocol, 'h2')

  // HTTP/2 may split Cookie into several fields; the session cookie is removed from all of them.
  const cookie = ['theme=dark', `${gateway.config.Sessions.CookieName}=${token}`, 'lang=en']
  const answer = await h2Request(session, '/echo/v1/who', { ...SPOOFED_H2, cookie })

  assert.equal(answer.status, 200, answer.body)
  const seen: Received = JSON.parse(answer.body)
  assert.equal(seen.headers['x-crm'], String(user.crm_id))
  assert.equal(seen.headers['x-scopes'], 'chat')
  assert.equal(seen.headers['x-keytype'], 'session')
  assert.equal(seen.headers['x-appid'], undefined)
  assert.equal(seen.headers['x-pkey-crm'], undefined)
  assert.equal(seen.headers['x-country'], undefined)
  assert.equal(seen.headers['x-project'], PROJECT)
  assert.equal(seen.headers['x-user-id'], undefined)
  assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1')
  assert.equal(seen.headers['x-forwarded-proto'], 'https')
  assert.equal(seen.headers['x-forwarded-host'], new URL(origin).host)
  assert.equal(seen.headers['x-real-ip'], undefined)
  assert.deepEqual(lookAlikes(seen), [])
  assert.equal(seen.headers.cookie, 'theme=dark; lang=en')
  assert.equal(seen.rawNames.filter((name) => name.toLowerCase() === 'x-crm').length, 1)
})

forEachDialect('a service key or an app token cannot claim another user, app or key type', async (t, dialect) => {
  const gateway = await startEcho(t, dialect)
  const { app } = await gateway.store.apps.create({ name: 'shop', owner: 9 })
  const { key } = await gateway.store.apiKeys.create({
    keyType: 'service',
    crmId: 0,
    appId: app.id,
    scopes: ['orders'],
    name: 'backend',
  })
  const { token } = await gateway.store.sessions.create({
    crmId: 0,
    appId: app.id,
    method: 'app_login',
    ip: '',
    userAgent: '',
  })
  const claims = { 'X-Crm': '1', 'X-AppId': '77', X_AppId: '78', 'X-KeyType': 'session', 'X.Scopes': 'admin' }

  const asService = await requestWithHeaders(`${gateway.url}/echo/a`, { headers: { ...claims, 'X-Api-Key': key } })
  const service: Received = JSON.parse(asService.body)
  assert.deepEqual(
    [service.headers['x-crm'], service.headers['x-appid'], service.headers['x-keytype'], service.headers['x-scopes']],
    [undefined, String(app.id), 'service', 'orders'],
  )
  assert.deepEqual(lookAlikes(service), [])

  const asApp = await requestWithHeaders(`${gateway.url}/echo/a`, {
    headers: { ...claims, Authorization: `Bearer ${token}` },
  })
  const appCall: Received = JSON.parse(asApp.body)
  assert.deepEqual(
    [appCall.headers['x-crm'], appCall.headers['x-appid'], appCall.headers['x-keytype'], appCall.headers['x-scopes']],
    [undefined, String(app.id), 'app', undefined],
  )
  assert.equal(appCall.headers.authorization, undefined, 'the app token stays at the gateway')
})

forEachDialect(
  'identity headers named in Connection are dropped, then still set by the gateway',
  async (t, dialect) => {
    const gateway = await startEcho(t, dialect)
    const user = await gateway.store.users.create({ scopes: ['chat'] })
    const { token } = await gateway.store.sessions.create({ crmId: user.crm_id, method: 't', ip: '', userAgent: '' })
    const response = await requestWithHeaders(`${gateway.url}/echo/x`, {
      headers: {
        Connection: 'keep-alive, X-Crm, x_scopes, X.KeyType, X-Project, X-Service-Auth',
        'X-Crm': '1',
        x_scopes: 'admin',
        'X.KeyType': 'service',
        'X-Project': 'other',
        Cookie: `${gateway.config.Sessions.CookieName}=${token}`,
      },
    })
    const seen: Received = JSON.parse(response.body)
    assert.deepEqual(
      [seen.headers['x-crm'], seen.headers['x-scopes'], seen.headers['x-keytype'], seen.headers['x-project']],
      [String(user.crm_id), 'chat', 'session', PROJECT],
    )
    assert.match(String(seen.headers['x-service-auth']), /^v1\.\d+\.[0-9a-f]{64}$/, 'the hop is still signed')
    assert.deepEqual(lookAlikes(seen), [])
  },
)

/** POSTs a chunked body followed by trailer fields over node:http; resolves with the answer's body. */
function postWithTrailers(url: string, body: string, trailers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const names = Object.keys(trailers).join(', ')
    const request = httpRequest(url, { method: 'POST', headers: { 'Transfer-Encoding': 'chunked', Trailer: names } })
    request.on('response', (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () => resolve(text))
    })
    request.on('error', reject)
    request.write(body)
    request.addTrailers(trailers)
    request.end()
  })
}

forEachDialect('identity headers sent as trailers of a chunked body never reach the module', async (t, dialect) => {
  const gateway = await startEcho(t, dialect)
  const answer = await postWithTrailers(`${gateway.url}/echo/v1/x`, 'hello', { 'X-Crm': '1', X_Scopes: 'admin' })
  const seen: Received = JSON.parse(answer)
  assert.equal(seen.body, 'hello')
  assert.deepEqual(seen.trailerNames, [])
  assert.equal(seen.headers['x-crm'], undefined)
  assert.equal(seen.headers.trailer, undefined)
})

forEachDialect('forwarding-header look-alikes from an untrusted peer never reach the module', async (t, dialect) => {
  const gateway = await startEcho(t, dialect, { Proxy: { TrustedProxies: ['10.0.0.0/8'] } })
  const response = await requestWithHeaders(`${gateway.url}/echo/x`, {
    headers: {
      X_Forwarded_For: '6.6.6.6',
      'X.Forwarded.For': '6.6.6.7',
      'x-forwarded-for': '6.6.6.8',
      X_Forwarded_Host: 'evil.example',
      'X.Forwarded.Proto': 'https',
      X_Real_IP: '6.6.6.9',
      Forwarded: 'for=6.6.6.6;host=evil.example',
    },
  })
  assert.equal(response.status, 200, response.body)
  const seen: Received = JSON.parse(response.body)
  assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1', 'the peer is not a trusted proxy: its chain is dropped')
  assert.equal(seen.headers['x-forwarded-host'], new URL(gateway.url).host)
  assert.equal(seen.headers['x-forwarded-proto'], 'http')
  assert.equal(seen.headers.forwarded, undefined)
  assert.deepEqual(lookAlikes(seen), [])
})

forEachDialect(
  'through a trusted proxy the module gets the forwarded host and scheme the domain guard checked',
  async (t, dialect) => {
    const gateway = await startEcho(t, dialect, { Proxy: { TrustedProxies: ['127.0.0.0/8'] } })
    // The client wrote the first entries; the trusted proxy appended the host and scheme it served.
    const appended = await requestWithHeaders(`${gateway.url}/echo/x`, {
      headers: { 'X-Forwarded-Host': 'evil.example, localhost:8443', 'X-Forwarded-Proto': 'javascript, https' },
    })
    assert.equal(appended.status, 200, appended.body)
    const seen: Received = JSON.parse(appended.body)
    assert.equal(seen.headers['x-forwarded-host'], 'localhost:8443')
    assert.equal(seen.headers['x-forwarded-proto'], 'https')

    const foreignLast = await requestWithHeaders(`${gateway.url}/echo/x`, {
      headers: { 'X-Forwarded-Host': 'localhost:8443, evil.example' },
    })
    assert.equal(foreignLast.status, 421)
    assert.equal(JSON.parse(foreignLast.body).error.code, errorCodes.MisdirectedHost.code)
    assert.equal(gateway.upstream.received.length, 1)
  },
)
