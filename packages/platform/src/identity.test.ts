import assert from 'node:assert/strict'
import { test } from 'node:test'
import { installServiceAuth, readIdentity, SERVICE_AUTH_HEADER, signedHeaders, signHop, verifyHop } from './identity.ts'
import { createService } from './service.ts'
import { json, listen } from './testing/http.ts'

const secret = 's'.repeat(40)
const hop = { method: 'POST', url: '/msg/v1/send_message?x=1', headers: { 'x-crm': '42', 'x-scopes': 'chat' } }

test('a signed hop verifies, and any change to it does not', () => {
  const now = Date.now()
  const signed = { ...hop, headers: { ...hop.headers, [SERVICE_AUTH_HEADER]: signHop(secret, hop, now) } }
  assert.equal(verifyHop(secret, signed, now), true)
  assert.equal(verifyHop('t'.repeat(40), signed, now), false, 'another secret')
  assert.equal(verifyHop(secret, { ...signed, url: '/msg/v1/send_message?x=2' }, now), false, 'another path')
  assert.equal(verifyHop(secret, { ...signed, method: 'GET' }, now), false, 'another method')
  assert.equal(
    verifyHop(secret, { ...signed, headers: { ...signed.headers, 'x-crm': '43' } }, now),
    false,
    'another user',
  )
  assert.equal(
    verifyHop(secret, { ...signed, headers: { ...signed.headers, 'x-appid': '7' } }, now),
    false,
    'added app',
  )
  assert.equal(verifyHop(secret, signed, now + 61_000), false, 'too old')
  assert.equal(verifyHop(secret, signed, now - 61_000), false, 'from the future')
})

test('malformed signatures are refused', () => {
  for (const value of ['', 'v1', 'v1.1.abc', `v2.${Date.now()}.${'0'.repeat(64)}`, `v1.x.${'0'.repeat(64)}`]) {
    assert.equal(verifyHop(secret, { ...hop, headers: { ...hop.headers, [SERVICE_AUTH_HEADER]: value } }), false, value)
  }
})

function createProtectedService() {
  const app = createService({
    name: 't',
    version: '1.2.3',
    healthPath: '/health',
    domainGuard: { domain: null, devHost: '' },
    logger: false,
  })
  installServiceAuth(app, { secret, exempt: ['/health'] })
  app.get('/whoami', async (request) => readIdentity(request))
  return app
}

test('a module refuses requests without the gateway signature but serves its health check', async (t) => {
  const base = await listen(t, createProtectedService())
  const unsigned = await fetch(`${base}/whoami`, { headers: { 'x-crm': '42' } })
  assert.equal(unsigned.status, 401)
  assert.equal((await json(unsigned)).error.code, 1008)
  assert.equal((await fetch(`${base}/health`)).status, 200)
})

test('a signed request reads the identity the gateway set', async (t) => {
  const base = await listen(t, createProtectedService())
  const headers = signedHeaders(secret, 'GET', '/whoami', {
    'X-Crm': '42',
    'X-Scopes': 'chat admin',
    'X-KeyType': 'session',
  })
  const { result } = await json(await fetch(`${base}/whoami`, { headers }))
  assert.deepEqual(result, {
    crmId: 42,
    scopes: ['chat', 'admin'],
    keyType: 'session',
    appId: 0,
    pkeyCrm: 0,
    country: '',
    project: '',
  })
})

test("an app's call reads the app and its owner, and X-Pkey-Crm counts only as a positive id", async (t) => {
  const base = await listen(t, createProtectedService())
  const call = async (pkeyCrm: string) => {
    const headers = signedHeaders(secret, 'GET', '/whoami', {
      'X-KeyType': 'service',
      'X-AppId': '7',
      'X-Pkey-Crm': pkeyCrm,
    })
    return (await json(await fetch(`${base}/whoami`, { headers }))).result
  }
  const service = await call('9')
  assert.deepEqual([service.crmId, service.keyType, service.appId, service.pkeyCrm], [0, 'service', 7, 9])
  for (const malformed of ['0', '-9', '9a', '09', '99999999999999999']) {
    assert.equal((await call(malformed)).pkeyCrm, 0, malformed)
  }
})

test('identity headers added after signing are refused', async (t) => {
  const base = await listen(t, createProtectedService())
  const headers = { ...signedHeaders(secret, 'GET', '/whoami', { 'X-Crm': '42' }), 'x-crm': '1' }
  assert.equal((await fetch(`${base}/whoami`, { headers })).status, 401)
})

test('the hop signature covers every identity header: changing or dropping any one breaks it', () => {
  // The spec's list, written out here so that a shorter list in the code cannot shorten the test.
  const identity = {
    'x-crm': '42',
    'x-scopes': 'chat admin',
    'x-keytype': 'session',
    'x-appid': '7',
    'x-pkey-crm': '9',
    'x-country': 'DE',
    'x-project': 'atrium',
  }
  const now = Date.now()
  const headers: Record<string, string> = {
    ...identity,
    [SERVICE_AUTH_HEADER]: signHop(secret, { ...hop, headers: identity }, now),
  }
  const signed = { ...hop, headers }
  assert.equal(verifyHop(secret, signed, now), true)
  for (const name of Object.keys(identity)) {
    const changed = { ...signed, headers: { ...signed.headers, [name]: 'other' } }
    assert.equal(verifyHop(secret, changed, now), false, `${name} changed`)
    const dropped = Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name))
    assert.equal(verifyHop(secret, { ...signed, headers: dropped }, now), false, `${name} dropped`)
  }
})

test('a module refuses a signed request whose scopes, key type, country or project changed on the way', async (t) => {
  const base = await listen(t, createProtectedService())
  const signed = signedHeaders(secret, 'GET', '/whoami', { 'X-Crm': '42', 'X-Scopes': 'chat', 'X-Country': 'DE' })
  const raised: [string, string][] = [
    ['x-scopes', 'chat admin'],
    ['x-keytype', 'session'],
    ['x-country', 'US'],
    ['x-project', 'other'],
  ]
  for (const [name, value] of raised) {
    const response = await fetch(`${base}/whoami`, { headers: { ...signed, [name]: value } })
    assert.equal(response.status, 401, name)
    assert.equal((await json(response)).error.code, 1008)
  }
  assert.equal((await fetch(`${base}/whoami`, { headers: signed })).status, 200, 'the unchanged request passes')
})
