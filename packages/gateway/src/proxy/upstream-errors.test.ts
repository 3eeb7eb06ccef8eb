import assert from 'node:assert/strict'
import { createDatabase, createTimetickGenerator } from '@atrium/platform'
import { forEachDialect, json, until } from '@atrium/platform/testing'
import { startGateway } from '../../test/support.ts'
import { downUpstreamUrl, startEchoUpstream, startSilentUpstream } from '../../test/upstream.ts'
import type { GatewayDatabase } from '../db/schema.ts'
import { createRoutes } from './routes.repository.ts'

forEachDialect('a module that is down answers BadGateway at once', async (t, dialect) => {
  const gateway = await startGateway(t, dialect, { settings: { Modules: { down: await downUpstreamUrl() } } })
  await gateway.store.routes.add({ prefix: '/down/', upstream: 'down' })
  const started = Date.now()
  const response = await fetch(`${gateway.url}/down/v1/x`, { method: 'POST', body: 'payload' })
  assert.equal(response.status, 502)
  const body = await json(response)
  assert.equal(body.error.code, 2000)
  assert.equal(typeof body.id, 'string')
  assert.ok(Date.now() - started < 5_000, 'no waiting on a refused connection')
})

forEachDialect('a module that never answers yields GatewayTimeout after the response timeout', async (t, dialect) => {
  const silent = await startSilentUpstream(t)
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { silent: silent.url }, Proxy: { ResponseTimeoutMs: 300 } },
  })
  await gateway.store.routes.add({ prefix: '/silent/', upstream: 'silent' })
  const started = Date.now()
  const response = await fetch(`${gateway.url}/silent/v1/x`)
  const elapsed = Date.now() - started
  assert.equal(response.status, 504)
  assert.equal((await json(response)).error.code, 2001)
  assert.equal(silent.requests, 1, 'the request reached the module once and was not retried')
  assert.ok(elapsed >= 290 && elapsed < 5_000, `answered after ${elapsed} ms`)
})

forEachDialect('a route pointing to an unconfigured module answers BadGateway', async (t, dialect) => {
  const gateway = await startGateway(t, dialect)
  await gateway.store.routes.add({ prefix: '/ext/', upstream: 'http://127.0.0.1:9/base' })
  await gateway.store.db
    .insertInto('routes')
    .values({ id: 1, prefix: '/gone/', upstream: 'gone', flags: 0, created: 0, timetick_update: 1 })
    .execute()
  await gateway.store.routes.refresh()
  const response = await fetch(`${gateway.url}/gone/x`)
  assert.equal(response.status, 502)
  assert.equal((await json(response)).error.code, 2000)
})

forEachDialect(
  'a route written by another process applies after the reload interval, without restart',
  async (t, dialect) => {
    const upstream = await startEchoUpstream(t)
    const gateway = await startGateway(t, dialect, {
      settings: { Modules: { echo: upstream.url }, Proxy: { RouteReloadMs: 150 } },
    })
    assert.equal((await fetch(`${gateway.url}/late/x`)).status, 404)

    // Another process (the CLI) has its own database handle and route repository.
    const other = createDatabase<GatewayDatabase>(gateway.config.GatewayDB)
    t.after(() => other.destroy())
    const cli = createRoutes(other.db, createTimetickGenerator({ node: 7 }))
    await cli.add({ prefix: '/late', upstream: 'echo' })

    await until(async () => (await fetch(`${gateway.url}/late/x`)).status === 200, 'the added route', 5_000)
    assert.equal(upstream.received.at(-1)?.url, '/late/x')

    await cli.remove('/late/')
    await until(
      async () => (await fetch(`${gateway.url}/late/x`)).status === 404,
      'the removal to apply the same way',
      5_000,
    )
  },
)
