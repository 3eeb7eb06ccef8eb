import assert from 'node:assert/strict'
import { generateKeyPairSync, sign } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import type { ClientHttp2Session } from 'node:http2'
import { type TestContext, test } from 'node:test'
import { AppFlag, type DatabaseDialect, RouteFlags } from '@atrium/platform'
import { forEachDialect, until } from '@atrium/platform/testing'
import { SERVICE_SECRET, startGateway } from '../../test/support.ts'
import { createTestCertificate, type H2Answer, h1Request, h2Connect, h2Request } from '../../test/tls.ts'
import { type Received, startEchoUpstream } from '../../test/upstream.ts'

// X-Pkey-Crm (docs/gateway.md, "X-Pkey-Crm"): the owner of the key or app a caller
// authenticated with, when the caller does not act as that user. Each credential kind the gateway
// knows, over HTTP/1.1 and HTTP/2, as a module that checks the hop signature receives it.

/** The origin of the test app, allowed to call /echo/ cross-origin (AppAuthAndCORS on both). */
const SHOP_ORIGIN = 'https://shop.example'

/** A client's own X-Pkey-Crm, in every spelling, repeated; HTTP/1.1 sends them as written. */
const SPOOFED_H1 = [
  ['X-Pkey-Crm', '5'],
  ['X-Pkey-Crm', '6'],
  ['x-pkey-crm', '7'],
  ['X-PKEY-CRM', '8'],
  ['x_pkey_crm', '9'],
  ['X.Pkey.Crm', '10'],
  ['X-Pkey_Crm', '11'],
]

/** The same in HTTP/2, where names are lower case; a list value sends the field twice. */
const SPOOFED_H2: Record<string, string | string[]> = {
  'x-pkey-crm': ['5', '6'],
  x_pkey_crm: '9',
  'x.pkey.crm': '10',
  'x-pkey_crm': '11',
}

const folded = (name: string) => name.toLowerCase().replace(/[_.]/g, '-')

/** What the module should receive of the identity: each value, or undefined for an absent header. */
interface Expected {
  crm?: number
  keyType?: string
  appId?: number
  pkeyCrm?: number
}

function assertIdentity(seen: Received, expected: Expected, label: string) {
  assert.equal(seen.hopVerified, true, `${label}: the hop signature verifies`)
  const text = (value: number | string | undefined) => (value === undefined ? undefined : String(value))
  assert.deepEqual(
    {
      crm: seen.headers['x-crm'],
      keyType: seen.headers['x-keytype'],
      appId: seen.headers['x-appid'],
      pkeyCrm: seen.headers['x-pkey-crm'],
    },
    {
      crm: text(expected.crm),
      keyType: expected.keyType,
      appId: text(expected.appId),
      pkeyCrm: text(expected.pkeyCrm),
    },
    label,
  )
  // One field, written by the gateway, or none: no client spelling of it rides along.
  const names = seen.rawNames.filter((name) => folded(name) === 'x-pkey-crm')
  assert.deepEqual(names, expected.pkeyCrm === undefined ? [] : ['x-pkey-crm'], `${label}: X-Pkey-Crm fields`)
}

/** The Set-Cookie value of the session cookie in an answer. */
function sessionCookie(answer: H2Answer, cookieName: string): string {
  const cookies = [answer.headers['set-cookie'] ?? []].flat()
  const cookie = cookies.find((line) => line.startsWith(`${cookieName}=`))
  assert.ok(cookie, `a session cookie in ${JSON.stringify(cookies)}`)
  return cookie.split(';')[0]!
}

/**
 * A TLS gateway (HTTP/1.1 and HTTP/2) whose /echo/ and /wallet/ routes go to an echo upstream that
 * checks the hop signature, with a signed-in person, and an app owned by another user with a
 * service key, its secret for AppLogin and AppAuthAndCORS from SHOP_ORIGIN.
 */
async function startPkeyGateway(t: TestContext, dialect: DatabaseDialect) {
  const certificate = await createTestCertificate(t)
  const upstream = await startEchoUpstream(t, { serviceSecret: SERVICE_SECRET })
  const gateway = await startGateway(t, dialect, {
    settings: {
      Tls: { CertFile: certificate.certFile, KeyFile: certificate.keyFile },
      Modules: { echo: upstream.url },
      Proxy: { RouteReloadMs: 100 },
    },
  })
  const origin = gateway.url.replace('http:', 'https:')
  const { store, config } = gateway
  await store.routes.add({ prefix: '/echo/', upstream: 'echo', flags: RouteFlags.AppAuthAndCORS })
  // The MCP wallet tools' path, to the same module.
  await store.routes.add({ prefix: '/wallet/', upstream: 'echo' })

  const person = await store.users.create({ scopes: ['chat'] })
  const owner = await store.users.create()
  const { app, secret } = await store.apps.create({
    name: 'shop',
    owner: owner.crm_id,
    flags: AppFlag.AppAuthAndCORS,
    origins: [SHOP_ORIGIN],
  })
  const { token } = await store.sessions.create({
    crmId: person.crm_id,
    method: 'email_otp',
    ip: '127.0.0.1',
    userAgent: 'test',
  })
  const keyFor = async (keyType: 'user' | 'service') =>
    (
      await store.apiKeys.create({
        keyType,
        crmId: keyType === 'user' ? person.crm_id : 0,
        appId: keyType === 'service' ? app.id : 0,
        scopes: [],
        name: keyType,
      })
    ).key
  const userKey = await keyFor('user')
  const serviceKey = await keyFor('service')

  const post = async (path: string, body: object) => {
    const answer = await h1Request(`${origin}${path}`, certificate.cert, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    assert.equal(answer.status, 200, answer.body)
    return answer
  }

  const result = async (path: string, body: object) => JSON.parse((await post(path, body)).body).result

  // AppLogin as an app does it: its id and secret for a bearer token.
  const appToken: string = (await result('/auth/v1/app/login', { appId: String(app.id), secret })).token

  // UserKey sign-in: the person's registered Ed25519 key signs the gateway's challenge.
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const raw = publicKey.export({ format: 'jwk' }).x as string
  assert.ok(await store.userKeys.add({ crmId: person.crm_id, name: 'laptop', publicKey: raw }))
  const challenge: string = (await result('/auth/v1/userkey/challenge', { publicKey: raw })).challenge
  const signature = sign(null, Buffer.from(challenge, 'utf8'), privateKey).toString('base64url')
  const userKeyCookie = sessionCookie(
    await post('/auth/v1/userkey/verify', { challenge, signature }),
    config.Sessions.CookieName,
  )

  // The app and /echo/ are read on the reload interval; once a preflight passes, calls from the shop's origin do.
  await until(async () => {
    const answer = await h1Request(`${origin}/echo/v1/who`, certificate.cert, {
      method: 'OPTIONS',
      headers: { origin: SHOP_ORIGIN, 'access-control-request-method': 'GET' },
    })
    return answer.status === 204
  }, 'the CORS layer to grant the shop on /echo/')

  const cookie = `${config.Sessions.CookieName}=${token}`
  const personId = person.crm_id
  const ownerId = owner.crm_id
  const session = { crm: personId, keyType: 'session' }
  /** Every credential kind, the headers that present it, and what the module should receive. */
  const kinds: { name: string; headers: Record<string, string>; expected: Expected }[] = [
    { name: 'anonymous', headers: {}, expected: {} },
    {
      name: 'chat guest (invite code and device, anonymous at the gateway)',
      headers: { 'x-invite-code': 'abcdefgh', 'x-device-guid': 'device-0001' },
      expected: {},
    },
    { name: 'session cookie', headers: { cookie }, expected: session },
    { name: 'session cookie of a UserKey sign-in', headers: { cookie: userKeyCookie }, expected: session },
    { name: 'session token as a bearer', headers: { authorization: `Bearer ${token}` }, expected: session },
    {
      name: "session cookie on a call from an app's origin (CORS)",
      headers: { cookie, origin: SHOP_ORIGIN },
      expected: { ...session, appId: app.id },
    },
    {
      name: "anonymous call from an app's origin (CORS)",
      headers: { origin: SHOP_ORIGIN },
      expected: { appId: app.id },
    },
    {
      name: 'user API key as a bearer',
      headers: { authorization: `Bearer ${userKey}` },
      expected: { crm: personId, keyType: 'user' },
    },
    {
      name: 'user API key in X-Api-Key',
      headers: { 'x-api-key': userKey },
      expected: { crm: personId, keyType: 'user' },
    },
    {
      name: 'service key as a bearer',
      headers: { authorization: `Bearer ${serviceKey}` },
      expected: { keyType: 'service', appId: app.id, pkeyCrm: ownerId },
    },
    {
      name: 'service key in X-Api-Key',
      headers: { 'x-api-key': serviceKey },
      expected: { keyType: 'service', appId: app.id, pkeyCrm: ownerId },
    },
    {
      name: 'AppLogin token',
      headers: { authorization: `Bearer ${appToken}` },
      expected: { keyType: 'app', appId: app.id, pkeyCrm: ownerId },
    },
  ]
  return { ...gateway, origin, ca: certificate.cert, upstream, kinds, person: personId, app }
}

type PkeyGateway = Awaited<ReturnType<typeof startPkeyGateway>>

/** GET over HTTP/1.1 with the credential headers and every spoofed spelling, as raw header lines. */
async function viaHttp1(gateway: PkeyGateway, path: string, headers: Record<string, string>): Promise<Received> {
  const lines = [['Host', new URL(gateway.origin).host], ...Object.entries(headers), ...SPOOFED_H1].flat()
  const answer = await h1Request(`${gateway.origin}${path}`, gateway.ca, { headers: lines })
  assert.equal(answer.alpn, 'http/1.1')
  assert.equal(answer.status, 200, answer.body)
  return JSON.parse(answer.body)
}

async function viaHttp2(session: ClientHttp2Session, path: string, headers: Record<string, string>) {
  const answer = await h2Request(session, path, { ...headers, ...SPOOFED_H2 })
  assert.equal(answer.status, 200, answer.body)
  return JSON.parse(answer.body) as Received
}

forEachDialect('every credential kind sets X-Pkey-Crm as documented, over HTTP/1.1 and HTTP/2', async (t, dialect) => {
  const gateway = await startPkeyGateway(t, dialect)
  const session = await h2Connect(t, gateway.origin, gateway.ca)
  assert.equal(session.alpnProtocol, 'h2')
  for (const kind of gateway.kinds) {
    await t.test(kind.name, async () => {
      assertIdentity(await viaHttp1(gateway, '/echo/v1/who', kind.headers), kind.expected, `${kind.name}, HTTP/1.1`)
      assertIdentity(await viaHttp2(session, '/echo/v1/who', kind.headers), kind.expected, `${kind.name}, HTTP/2`)
    })
  }
})

test('the spoofed X-Pkey-Crm fields reach a module when nothing strips them', async (t) => {
  // The control for the tests here: sent straight to the module, every spelling arrives as
  // written, so their absence behind the gateway is the gateway's doing.
  const upstream = await startEchoUpstream(t, { serviceSecret: SERVICE_SECRET })
  const url = new URL(upstream.url)
  const status = await new Promise<number>((resolve, reject) => {
    const request = httpRequest(url, { headers: [['Host', url.host], ...SPOOFED_H1].flat() }, (response) => {
      response.resume().on('end', () => resolve(response.statusCode ?? 0))
    })
    request.on('error', reject)
    request.end()
  })
  assert.equal(status, 401, 'an unsigned request is refused by the module')
  const seen = upstream.received[0]!
  assert.equal(seen.hopVerified, false)
  assert.deepEqual(
    seen.rawNames.filter((name) => folded(name) === 'x-pkey-crm'),
    SPOOFED_H1.map(([name]) => name),
  )
})

forEachDialect("an MCP tool's module call carries the X-Pkey-Crm of the caller's key", async (t, dialect) => {
  const gateway = await startPkeyGateway(t, dialect)
  await gateway.store.mcpGrants.allow({
    subject: { kind: 'app', id: gateway.app.id },
    tool: 'wallet_balance',
    currency: '',
    perCall: 0,
    perDay: 0,
  })
  await gateway.store.mcpGrants.allow({
    subject: { kind: 'user', id: gateway.person },
    tool: 'wallet_balance',
    currency: '',
    perCall: 0,
    perDay: 0,
  })
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'wallet_balance', arguments: { currency: 'USD' } },
  })
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const session = await h2Connect(t, gateway.origin, gateway.ca)
  const byName = new Map(gateway.kinds.map((kind) => [kind.name, kind]))

  for (const name of [
    'service key in X-Api-Key',
    'AppLogin token',
    'user API key as a bearer',
    'session token as a bearer',
  ]) {
    const kind = byName.get(name)!
    const calls = async (protocol: string, send: () => Promise<{ status: number }>) => {
      const before = gateway.upstream.received.length
      assert.equal((await send()).status, 200, `${name}, ${protocol}`)
      // The gateway also polls every module's events feed; only the tool's call is looked at.
      const seen = gateway.upstream.received.slice(before).filter((request) => request.url.startsWith('/wallet/'))
      assert.deepEqual(
        seen.map((request) => request.url),
        ['/wallet/v1/balance?currency=USD'],
      )
      assertIdentity(seen[0]!, kind.expected, `${name} through MCP, ${protocol}`)
    }
    const headers = { ...mcpHeaders, ...kind.headers }
    await calls('HTTP/1.1', () =>
      h1Request(`${gateway.origin}/auth/v1/mcp`, gateway.ca, {
        method: 'POST',
        headers: [['Host', new URL(gateway.origin).host], ...Object.entries(headers), ...SPOOFED_H1].flat(),
        body,
      }),
    )
    await calls('HTTP/2', () =>
      h2Request(session, '/auth/v1/mcp', { ':method': 'POST', ...headers, ...SPOOFED_H2 }, body),
    )
  }
})
