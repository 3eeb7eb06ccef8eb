import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { forEachDialect, json, metricValue, until } from '@atrium/platform/testing'
import { startRestartableChat } from '../../test/events.ts'
import { signedInUser, startGateway } from '../../test/support.ts'
import { downUpstreamUrl, startEchoUpstream } from '../../test/upstream.ts'

forEachDialect('GET /auth/v1/metrics answers only a caller with the admin scope', async (t, dialect) => {
  const gateway = await startGateway(t, dialect)
  const anonymous = await fetch(`${gateway.url}/auth/v1/metrics`)
  assert.equal(anonymous.status, 401)
  assert.doesNotMatch(await anonymous.text(), /atrium_/)

  const member = await signedInUser(gateway)
  const refused = await fetch(`${gateway.url}/auth/v1/metrics`, { headers: member.headers })
  assert.equal(refused.status, 403)
  assert.equal((await json(refused)).error.message, 'Metrics are read with the admin scope.')

  const operator = await signedInUser(gateway)
  await gateway.store.users.setScopes(operator.crmId, ['admin'])
  const allowed = await fetch(`${gateway.url}/auth/v1/metrics`, { headers: operator.headers })
  assert.equal(allowed.status, 200)
  const text = await allowed.text()
  assert.match(text, /^# HELP atrium_http_request_duration_seconds /m)
  // The refusals above were measured like any request.
  assert.equal(
    metricValue(text, 'atrium_http_request_duration_seconds_count', { route: '/auth/v1/metrics', status: '403' }),
    1,
  )
  if (dialect === 'postgres') assert.ok(metricValue(text, 'atrium_db_pool_connections', { state: 'total' }) >= 1)
})

forEachDialect('proxied requests are counted by route prefix and failed modules by upstream', async (t, dialect) => {
  const echo = await startEchoUpstream(t)
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { echo: echo.url, down: await downUpstreamUrl() }, Metrics: { Listen: true, Port: 0 } },
  })
  await gateway.store.routes.add({ prefix: '/echo/', upstream: 'echo' })
  await gateway.store.routes.add({ prefix: '/down/', upstream: 'down' })
  const address = gateway.app.metrics.listenerAddress()
  assert.ok(address)
  const scrape = async () => (await fetch(`http://127.0.0.1:${address.port}/metrics`)).text()
  const before = await scrape()

  const gets = 4
  const posts = 2
  const failures = 3
  for (let index = 0; index < gets; index++)
    assert.equal((await fetch(`${gateway.url}/echo/v1/item/${index}`)).status, 200)
  for (let index = 0; index < posts; index++) {
    assert.equal((await fetch(`${gateway.url}/echo/v1/items`, { method: 'POST', body: 'x' })).status, 200)
  }
  for (let index = 0; index < failures; index++) assert.equal((await fetch(`${gateway.url}/down/v1/x`)).status, 502)
  const after = await scrape()

  const delta = (name: string, labels: Record<string, string>) =>
    metricValue(after, name, labels) - metricValue(before, name, labels)
  const count = 'atrium_http_request_duration_seconds_count'
  assert.equal(delta(count, { method: 'GET', route: '/echo/', status: '200' }), gets)
  assert.equal(delta(count, { method: 'POST', route: '/echo/', status: '200' }), posts)
  assert.equal(delta(count, { method: 'GET', route: '/down/', status: '502' }), failures)
  assert.equal(delta('atrium_proxy_upstream_errors_total', { upstream: 'down', kind: 'failed' }), failures)
  assert.equal(delta('atrium_proxy_upstream_errors_total', { upstream: 'echo', kind: 'failed' }), 0)
  assert.doesNotMatch(after, /item\/0/, 'paths never become labels')
})

forEachDialect(
  'readiness names the chat module while it is down and is ready again once it is back',
  async (t, dialect) => {
    const chat = await startRestartableChat(t, dialect)
    const gateway = await startGateway(t, dialect, { settings: { Modules: { chat: chat.base } } })
    const ready = () => fetch(`${gateway.url}/auth/v1/ready`)

    const up = await ready()
    assert.equal(up.status, 200)
    assert.deepEqual((await json(up)).result, { status: 'ready', checks: { database: 'up', chat: 'up' } })

    await chat.stop()
    const down = await ready()
    assert.equal(down.status, 503)
    const body = await json(down)
    assert.equal(body.error.code, 1013)
    assert.equal(body.error.message, 'not ready: chat down')
    assert.deepEqual(body.error.details, { checks: { database: 'up', chat: 'down' } })
    // Liveness stays cheap and up: the gateway process itself is fine.
    assert.equal((await fetch(`${gateway.url}/auth/v1/health`)).status, 200)

    await chat.start()
    await until(async () => (await ready()).status === 200, 'the gateway to be ready again')
  },
)

forEachDialect('an optional module being down leaves the gateway ready', async (t, dialect) => {
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { crm: await downUpstreamUrl() }, Readiness: { OptionalModules: ['crm'] } },
  })
  const response = await fetch(`${gateway.url}/auth/v1/ready`)
  assert.equal(response.status, 200)
  assert.deepEqual((await json(response)).result.checks, { database: 'up' })
})

forEachDialect(
  "GET /auth/v1/modules lists the gateway's and each module's version for the admin scope",
  async (t, dialect) => {
    const chat = await startRestartableChat(t, dialect)
    const gateway = await startGateway(t, dialect, {
      settings: { Modules: { chat: chat.base, crm: await downUpstreamUrl() } },
    })
    const modules = (headers: Record<string, string> = {}) => fetch(`${gateway.url}/auth/v1/modules`, { headers })

    assert.equal((await modules()).status, 401)
    const member = await signedInUser(gateway)
    const refused = await modules(member.headers)
    assert.equal(refused.status, 403)
    assert.equal((await json(refused)).error.message, 'Module versions are read with the admin scope.')

    const operator = await signedInUser(gateway)
    await gateway.store.users.setScopes(operator.crmId, ['admin'])
    const answer = await modules(operator.headers)
    assert.equal(answer.status, 200)
    const versionOf = async (path: string) =>
      JSON.parse(await readFile(new URL(`../../../${path}/package.json`, import.meta.url), 'utf8')).version
    assert.deepEqual((await json(answer)).result.modules, [
      { name: 'gateway', status: 'up', version: await versionOf('gateway'), build: 'development' },
      { name: 'chat', status: 'up', version: await versionOf('chat'), build: 'development' },
      { name: 'crm', status: 'down' },
    ])
  },
)
