import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { AppFlag, type DatabaseDialect, RouteFlags } from '@atrium/platform'
import { forEachDialect, json, until } from '@atrium/platform/testing'
import { signedInUser, startGateway } from '../../test/support.ts'
import { type Received, startEchoUpstream } from '../../test/upstream.ts'

const FLAGGED = 'https://flagged.example'
const PLAIN = 'https://plain.example'
const FOREIGN = 'https://evil.example'

/** Apps with and without AppAuthAndCORS, routes with and without it, and a real upstream. */
async function startCors(t: TestContext, dialect: DatabaseDialect) {
  const upstream = await startEchoUpstream(t)
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { echo: upstream.url }, Proxy: { RouteReloadMs: 100 } },
  })
  await gateway.store.apps.create({ name: 'plain', owner: 1, origins: [PLAIN] })
  await gateway.store.routes.add({ prefix: '/closed/', upstream: 'echo' })
  const { app: flagged } = await gateway.store.apps.create({
    name: 'flagged',
    owner: 1,
    flags: AppFlag.AppAuthAndCORS,
    origins: [FLAGGED],
  })
  await gateway.store.routes.add({ prefix: '/open/', upstream: 'echo', flags: RouteFlags.AppAuthAndCORS })
  // Apps and routes are read on the reload interval, as changes by another process are. The flagged
  // app and /open/ were written last: once a preflight grants them, every reading sees the rest too.
  await until(
    async () => (await preflight(`${gateway.url}/open/v1/send`, FLAGGED)).status === 204,
    'the CORS layer to grant the flagged app on /open/',
  )
  return { ...gateway, upstream, flagged }
}

function preflight(url: string, origin: string, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', ...headers },
  })
}

function corsHeaders(response: Response): string[] {
  return [...response.headers.keys()].filter((name) => name.startsWith('access-control-'))
}

async function assertRefused(response: Response) {
  assert.equal(response.status, 403)
  assert.equal((await json(response)).error.code, 2007)
  assert.deepEqual(corsHeaders(response), [], 'a refusal carries no CORS headers')
}

forEachDialect('app flag and route flag both set: preflight and call are allowed', async (t, dialect) => {
  const gateway = await startCors(t, dialect)
  const answer = await preflight(`${gateway.url}/open/v1/send`, FLAGGED, {
    'Access-Control-Request-Headers': 'Content-Type, X-CSRF-Token, X-Device-Guid',
  })
  assert.equal(answer.status, 204)
  assert.equal(answer.headers.get('access-control-allow-origin'), FLAGGED)
  assert.equal(answer.headers.get('access-control-allow-credentials'), 'true')
  assert.match(answer.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/)
  assert.equal(answer.headers.get('access-control-allow-headers'), 'content-type, x-csrf-token, x-device-guid')
  assert.equal(answer.headers.get('access-control-max-age'), '600')
  assert.match(answer.headers.get('vary') ?? '', /Origin/)
  assert.equal(gateway.upstream.received.length, 0, 'the gateway answers preflight itself')

  const call = await fetch(`${gateway.url}/open/v1/send`, { headers: { Origin: FLAGGED } })
  assert.equal(call.status, 200)
  assert.equal(call.headers.get('access-control-allow-origin'), FLAGGED, 'the exact origin, never *')
  assert.equal(call.headers.get('access-control-allow-credentials'), 'true')
  assert.match(call.headers.get('vary') ?? '', /Origin/)
  const seen: Received = await json(call)
  assert.equal(seen.headers['x-appid'], String(gateway.flagged.id), 'an anonymous caller gets the app of the origin')
})

forEachDialect('app flag set, route flag missing: refused without contacting the module', async (t, dialect) => {
  const gateway = await startCors(t, dialect)
  await assertRefused(await preflight(`${gateway.url}/closed/v1/send`, FLAGGED))
  await assertRefused(await fetch(`${gateway.url}/closed/v1/send`, { method: 'POST', headers: { Origin: FLAGGED } }))
  assert.equal(gateway.upstream.received.length, 0)
})

forEachDialect('route flag set, app flag missing: refused', async (t, dialect) => {
  const gateway = await startCors(t, dialect)
  await assertRefused(await preflight(`${gateway.url}/open/v1/send`, PLAIN))
  await assertRefused(await fetch(`${gateway.url}/open/v1/send`, { headers: { Origin: PLAIN } }))
  assert.equal(gateway.upstream.received.length, 0)
})

forEachDialect('neither flag set: refused', async (t, dialect) => {
  const gateway = await startCors(t, dialect)
  await assertRefused(await preflight(`${gateway.url}/closed/v1/send`, PLAIN))
  await assertRefused(await fetch(`${gateway.url}/closed/v1/send`, { headers: { Origin: PLAIN } }))
  assert.equal(gateway.upstream.received.length, 0)
})

forEachDialect('an origin no app registered is refused, whatever the route says', async (t, dialect) => {
  const gateway = await startCors(t, dialect)
  await assertRefused(await preflight(`${gateway.url}/open/v1/send`, FOREIGN))
  await assertRefused(await fetch(`${gateway.url}/open/v1/send`, { headers: { Origin: FOREIGN } }))
  await assertRefused(await fetch(`${gateway.url}/open/v1/send`, { headers: { Origin: 'null' } }))
  assert.equal(gateway.upstream.received.length, 0)
})

forEachDialect('look-alikes of a flagged origin are foreign origins', async (t, dialect) => {
  const gateway = await startCors(t, dialect)
  for (const origin of [
    'https://flagged.example.evil.example',
    'https://evilflagged.example',
    'https://sub.flagged.example',
    'http://flagged.example',
    'https://flagged.example:443',
    'https://flagged.example/',
    'https://FLAGGED.example',
    `${FLAGGED}, ${FOREIGN}`,
  ]) {
    await assertRefused(await preflight(`${gateway.url}/open/v1/send`, origin))
    await assertRefused(await fetch(`${gateway.url}/open/v1/send`, { method: 'POST', headers: { Origin: origin } }))
  }
  assert.equal(gateway.upstream.received.length, 0)
})

forEachDialect('the gateway’s own API gives no CORS grant, even to a flagged origin', async (t, dialect) => {
  const gateway = await startCors(t, dialect)
  const user = await gateway.store.users.create()
  const { token } = await gateway.store.sessions.create({ crmId: user.crm_id, method: 't', ip: '', userAgent: '' })
  const cookie = `${gateway.config.Sessions.CookieName}=${token}`
  for (const origin of [FLAGGED, FOREIGN]) {
    const answer = await preflight(`${gateway.url}/auth/v1/session`, origin, { 'Access-Control-Request-Method': 'GET' })
    assert.deepEqual(corsHeaders(answer), [], `preflight from ${origin}`)
    const read = await fetch(`${gateway.url}/auth/v1/session`, { headers: { Origin: origin, cookie } })
    assert.deepEqual(corsHeaders(read), [], `the session (and its CSRF token) is not readable from ${origin}`)
  }
})

forEachDialect('a preflight asking for a method or header outside the safe list is refused', async (t, dialect) => {
  const gateway = await startCors(t, dialect)
  await assertRefused(await preflight(`${gateway.url}/open/x`, FLAGGED, { 'Access-Control-Request-Headers': 'X-Crm' }))
  const trace = await fetch(`${gateway.url}/open/x`, {
    method: 'OPTIONS',
    headers: { Origin: FLAGGED, 'Access-Control-Request-Method': 'CONNECT' },
  })
  await assertRefused(trace)
})

forEachDialect('same-origin and origin-less calls involve no CORS', async (t, dialect) => {
  const gateway = await startCors(t, dialect)
  const same = await fetch(`${gateway.url}/closed/x`, { headers: { Origin: gateway.config.PublicOrigin } })
  assert.equal(same.status, 200)
  assert.deepEqual(corsHeaders(same), [])
  const none = await fetch(`${gateway.url}/closed/x`)
  assert.equal(none.status, 200)
  assert.deepEqual(corsHeaders(none), [])
  const seen: Received = await json(none)
  assert.equal(seen.headers['x-appid'], undefined)
})

forEachDialect(
  'a cookie session calling from an approved origin passes CSRF; from a foreign one it does not',
  async (t, dialect) => {
    const gateway = await startCors(t, dialect)
    const { crmId, headers } = await signedInUser(gateway)
    const allowed = await fetch(`${gateway.url}/open/v1/send`, {
      method: 'POST',
      headers: { ...headers, Origin: FLAGGED },
      body: '{}',
    })
    assert.equal(allowed.status, 200)
    const seen: Received = await json(allowed)
    assert.equal(seen.headers['x-crm'], String(crmId))
    assert.equal(seen.headers['x-appid'], String(gateway.flagged.id))
    const foreign = await fetch(`${gateway.url}/open/v1/send`, {
      method: 'POST',
      headers: { ...headers, Origin: FOREIGN },
      body: '{}',
    })
    assert.equal(foreign.status, 403)
    assert.deepEqual(corsHeaders(foreign), [])
    assert.equal(gateway.upstream.received.length, 1)
  },
)
