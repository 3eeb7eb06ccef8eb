import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, errorCodes, RouteFlags } from '@atrium/platform'
import { forEachDialect, requestWithHeaders } from '@atrium/platform/testing'
import { createClock, startGateway } from '../../test/support.ts'
import { type Received, startEchoUpstream } from '../../test/upstream.ts'

/**
 * A gateway with an open catch-all route `/` and a RequireSession route `/locked/`, both to the
 * same echo upstream (so a path that slipped past the RequireSession match would still reach it).
 */
async function startRoutes(t: TestContext, dialect: DatabaseDialect) {
  const clock = createClock()
  const upstream = await startEchoUpstream(t)
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { echo: upstream.url }, Sessions: { IdleSeconds: 600 } },
    now: clock.now,
  })
  await gateway.store.routes.add({ prefix: '/', upstream: 'echo' })
  await gateway.store.routes.add({ prefix: '/locked/', upstream: 'echo', flags: RouteFlags.RequireSession })
  async function sessionCookie() {
    const user = await gateway.store.users.create()
    const created = await gateway.store.sessions.create({ crmId: user.crm_id, method: 'test', ip: '', userAgent: '' })
    return { ...created, cookie: `${gateway.config.Sessions.CookieName}=${created.token}` }
  }
  return { ...gateway, upstream, clock, sessionCookie }
}

forEachDialect('a request path never picks the host the gateway forwards to', async (t, dialect) => {
  const gateway = await startRoutes(t, dialect)
  const elsewhere = await startEchoUpstream(t)
  const host = new URL(elsewhere.url).host
  for (const path of [`//${host}/x`, `//${host}`, `///${host}/x`, `/%2F${host}/x`, `/%2F%2F${host}/x`]) {
    const response = await requestWithHeaders(`${gateway.url}${path}`)
    assert.equal(response.status, 200, `${path}: ${response.body}`)
    assert.equal((JSON.parse(response.body) as Received).url, path, 'the route’s module gets the path as sent')
  }
  assert.equal(elsewhere.received.length, 0, 'no request went to the host named in the path')
})

forEachDialect('an anonymous caller never reaches a RequireSession route, however it asks', async (t, dialect) => {
  const gateway = await startRoutes(t, dialect)
  const expired = await gateway.sessionCookie()
  const revoked = await gateway.sessionCookie()
  await gateway.store.sessions.revoke(revoked.session.id)
  gateway.clock.advance(300_000)
  const live = await gateway.sessionCookie()
  gateway.clock.advance(300_000) // `expired` is now idle for exactly Sessions.IdleSeconds
  const name = gateway.config.Sessions.CookieName

  const attempts: [string, { method?: string; path?: string; headers?: Record<string, string> }][] = [
    ['no credentials', {}],
    ['a cookie the gateway never issued', { headers: { Cookie: `${name}=${'A'.repeat(43)}` } }],
    ['an idle-expired cookie', { headers: { Cookie: expired.cookie } }],
    ['a revoked cookie', { headers: { Cookie: revoked.cookie } }],
    [
      'spoofed identity headers',
      { headers: { 'X-Crm': '1', 'X-KeyType': 'session', X_Crm: '1', 'X-Scopes': 'admin' } },
    ],
    ['a POST', { method: 'POST' }],
    ['a HEAD', { method: 'HEAD' }],
    ['an OPTIONS that is no preflight', { method: 'OPTIONS' }],
    ['the bare prefix', { path: '/locked' }],
    ['a percent-encoded prefix', { path: '/%6Cocked/v1/x' }],
    ['an encoded slash', { path: '/locked%2Fv1/x' }],
    ['repeated slashes', { path: '//locked//v1/x' }],
  ]
  for (const [what, { method = 'GET', path = '/locked/v1/x', headers = {} }] of attempts) {
    const response = await requestWithHeaders(`${gateway.url}${path}`, { method, headers })
    assert.equal(response.status, 401, what)
    if (method !== 'HEAD') {
      const body = JSON.parse(response.body)
      assert.equal(body.error.code, errorCodes.SessionRequired.code, what)
      assert.equal(body.id, response.headers['x-request-id'], what)
    }
  }
  const badBearer = await requestWithHeaders(`${gateway.url}/locked/v1/x`, {
    headers: { Authorization: `Bearer ${'B'.repeat(43)}` },
  })
  assert.equal(badBearer.status, 401)
  assert.equal(JSON.parse(badBearer.body).error.code, errorCodes.InvalidCredentials.code)
  assert.equal(gateway.upstream.received.length, 0, 'the module was never called')

  const allowed = await requestWithHeaders(`${gateway.url}/locked/v1/x`, { headers: { Cookie: live.cookie } })
  assert.equal(allowed.status, 200, 'the live session passes, so the refusals above were about the caller')
  assert.equal(gateway.upstream.received.length, 1)
})
