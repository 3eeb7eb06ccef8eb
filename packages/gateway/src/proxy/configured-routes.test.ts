import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RouteFlags } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect } from '@atrium/platform/testing'
import { SERVICE_SECRET } from '../../test/support.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'

const modules = { chat: 'http://127.0.0.1:1' }

function configFor(database: string, routes: unknown) {
  return loadGatewayConfig(
    { GatewayDB: database, ServiceSecret: SERVICE_SECRET, Modules: modules, Proxy: { Routes: routes } },
    {},
  )
}

forEachDialect(
  'configured routes are added at start; existing prefixes keep what the operator set',
  async (t, dialect) => {
    const database = await createTestDatabaseUrl(t, dialect)
    const routes = [
      { Prefix: '/msg', Upstream: 'chat', Flags: ['AppAuthAndCORS'] },
      { Prefix: '/files/', Upstream: 'https://files.internal/base', Flags: ['RequireSession', 'AppAuthAndCORS'] },
    ]
    const first = await buildGateway(configFor(database, routes))
    assert.deepEqual(
      (await first.store.routes.list()).map(({ prefix, upstream, flags }) => [prefix, upstream, flags]),
      [
        ['/files/', 'https://files.internal/base', RouteFlags.RequireSession | RouteFlags.AppAuthAndCORS],
        ['/msg/', 'chat', RouteFlags.AppAuthAndCORS],
      ],
    )
    assert.equal(first.store.routes.table.match('/msg/v1/send_message')?.upstream, 'chat')
    // The operator changes /msg/ with the CLI; a restart must not undo it or add a duplicate.
    await first.store.routes.remove('/msg/')
    await first.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
    await first.close()

    const second = await buildGateway(configFor(database, routes))
    t.after(() => second.close())
    assert.deepEqual(
      (await second.store.routes.list()).map(({ prefix, flags }) => [prefix, flags]),
      [
        ['/files/', RouteFlags.RequireSession | RouteFlags.AppAuthAndCORS],
        ['/msg/', RouteFlags.RequireSession],
      ],
    )
  },
)

test('a configured route with an unknown module or a reserved prefix fails the start, naming the setting', async (t) => {
  for (const route of [
    { Prefix: '/wallet/', Upstream: 'wallet', Flags: [] },
    { Prefix: '/private/', Upstream: 'chat', Flags: [] },
  ]) {
    const database = await createTestDatabaseUrl(t, 'sqlite')
    await assert.rejects(buildGateway(configFor(database, [route])), (error: Error) => {
      assert.match(error.message, new RegExp(`^Proxy\\.Routes: route ${route.Prefix} -> ${route.Upstream}: `))
      return true
    })
  }
})

test('an unknown flag name in Proxy.Routes is a configuration error', () => {
  assert.throws(
    () => configFor('sqlite::memory:', [{ Prefix: '/msg/', Upstream: 'chat', Flags: ['Public'] }]),
    /Routes/,
  )
})
