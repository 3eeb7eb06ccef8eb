import assert from 'node:assert/strict'
import { once } from 'node:events'
import { Agent, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { forEachDialect, type RawResponse, requestWithHeaders as send } from '@atrium/platform/testing'
import { createClock, startGateway } from '../../test/support.ts'

const OFF = { Connection: { Requests: 0 }, Session: { Requests: 0 }, ApiKey: { Requests: 0 }, Bandwidth: { Bytes: 0 } }

/** Asserts a RateLimited refusal of the scope with Retry-After in the header and the details. */
function assertRefused(answer: RawResponse, scope: string, retryAfterSeconds: number) {
  assert.equal(answer.status, 429)
  assert.equal(answer.headers['retry-after'], String(retryAfterSeconds))
  const { error } = JSON.parse(answer.body)
  assert.equal(error.code, 1011)
  assert.deepEqual(error.details, { scope, retryAfterSeconds })
}

async function start(t: TestContext, dialect: DatabaseDialect, limits: Record<string, unknown>) {
  const clock = createClock()
  const gateway = await startGateway(t, dialect, { settings: { RateLimits: { ...OFF, ...limits } }, now: clock.now })
  return { ...gateway, clock, health: `${gateway.url}/auth/v1/health` }
}

test('the connection limit counts one keep-alive connection: N pass, N+1 waits for the next window', async (t) => {
  const { health, clock } = await start(t, 'sqlite', { Connection: { Requests: 3, WindowSeconds: 10 } })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.after(() => agent.destroy())
  for (let i = 0; i < 3; i++) assert.equal((await send(health, { agent })).status, 200)
  assertRefused(await send(health, { agent }), 'connection', 10)
  assert.equal((await send(health)).status, 200, 'another connection has its own window')
  clock.advance(9_999)
  assertRefused(await send(health, { agent }), 'connection', 1)
  clock.advance(1)
  assert.equal((await send(health, { agent })).status, 200, 'the first request of the next window passes')
})

forEachDialect('the session limit: N pass, N+1 is refused until the window ends', async (t, dialect) => {
  const { health, clock, store } = await start(t, dialect, { Session: { Requests: 3, WindowSeconds: 60 } })
  const user = await store.users.create()
  const session = (await store.sessions.create({ crmId: user.crm_id, method: 'test', ip: '127.0.0.1', userAgent: 't' }))
    .token
  const other = (await store.sessions.create({ crmId: user.crm_id, method: 'test', ip: '127.0.0.1', userAgent: 't' }))
    .token
  const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })
  clock.advance(12_345)
  for (let i = 0; i < 3; i++) assert.equal((await send(health, as(session))).status, 200)
  assertRefused(await send(health, as(session)), 'session', 48)
  assert.equal((await send(health, as(other))).status, 200, 'another session has its own count')
  assert.equal((await send(health)).status, 200, 'anonymous requests have no session count')
  clock.advance(60_000 - 12_345 - 1)
  assertRefused(await send(health, as(session)), 'session', 1)
  clock.advance(1)
  assert.equal((await send(health, as(session))).status, 200)
})

forEachDialect('the API key limit: N pass, N+1 is refused until the window ends', async (t, dialect) => {
  const { health, clock, store } = await start(t, dialect, { ApiKey: { Requests: 2, WindowSeconds: 30 } })
  const user = await store.users.create()
  const newKey = async () =>
    (await store.apiKeys.create({ keyType: 'user', crmId: user.crm_id, appId: 0, scopes: [], name: 'k' })).key
  const [key, otherKey] = [await newKey(), await newKey()]
  assert.equal((await send(health, { headers: { 'x-api-key': key } })).status, 200)
  assert.equal((await send(health, { headers: { authorization: `Bearer ${key}` } })).status, 200)
  assertRefused(await send(health, { headers: { 'x-api-key': key } }), 'apiKey', 30)
  assert.equal((await send(health, { headers: { 'x-api-key': otherKey } })).status, 200)
  clock.advance(29_999)
  assertRefused(await send(health, { headers: { 'x-api-key': key } }), 'apiKey', 1)
  clock.advance(1)
  assert.equal((await send(health, { headers: { 'x-api-key': key } })).status, 200)
})

forEachDialect('bandwidth counts response bytes per IP for anonymous callers and per session', async (t, dialect) => {
  const probe = await start(t, dialect, {})
  const length = Buffer.byteLength((await send(probe.health)).body)
  const { health, clock, store } = await start(t, dialect, { Bandwidth: { Bytes: 3 * length, WindowSeconds: 60 } })
  for (let i = 0; i < 3; i++) assert.equal((await send(health)).status, 200)
  assertRefused(await send(health), 'bandwidth', 60)
  const user = await store.users.create()
  const { token } = await store.sessions.create({ crmId: user.crm_id, method: 'test', ip: '127.0.0.1', userAgent: 't' })
  const answer = await send(health, { headers: { authorization: `Bearer ${token}` } })
  assert.equal(answer.status, 200, 'a session from the same address has its own budget')
  clock.advance(60_000)
  assert.equal((await send(health)).status, 200)
})

forEachDialect('a client cannot get a fresh per-IP budget by spoofing X-Forwarded-For', async (t, dialect) => {
  const probe = await start(t, dialect, {})
  const length = Buffer.byteLength((await send(probe.health)).body)
  const clock = createClock()
  const { url } = await startGateway(t, dialect, {
    settings: {
      RateLimits: { ...OFF, Bandwidth: { Bytes: 3 * length, WindowSeconds: 60 } },
      Proxy: { TrustedProxies: ['10.0.0.0/8'] },
    },
    now: clock.now,
  })
  const spoofed = (n: number) => ({
    headers: { 'x-forwarded-for': `198.51.100.${n}`, 'x-real-ip': `198.51.100.${n}`, forwarded: `for=198.51.100.${n}` },
  })
  for (let n = 1; n <= 3; n++) assert.equal((await send(`${url}/auth/v1/health`, spoofed(n))).status, 200)
  assertRefused(await send(`${url}/auth/v1/health`, spoofed(4)), 'bandwidth', 60)
})

forEachDialect('bandwidth counts request bodies, declared or chunked, on their way to a module', async (t, dialect) => {
  const upstream = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.end('ok'))
  })
  upstream.listen(0, '127.0.0.1')
  await once(upstream, 'listening')
  t.after(() => upstream.close())
  const { url, health, store } = await start(t, dialect, { Bandwidth: { Bytes: 10_000, WindowSeconds: 60 } })
  await store.routes.add({ prefix: '/up/', upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` })

  const declared = await send(`${url}/up/a`, { method: 'POST', body: 'x'.repeat(6_000) })
  assert.equal(declared.status, 200)
  assert.equal(declared.body, 'ok')
  assert.equal((await send(health)).status, 200, 'about 6 kB of 10 kB used')
  const chunked = await send(`${url}/up/b`, {
    method: 'POST',
    headers: { 'transfer-encoding': 'chunked' },
    body: 'y'.repeat(4_000),
  })
  assert.equal(chunked.status, 200)
  assertRefused(await send(health), 'bandwidth', 60)
})
