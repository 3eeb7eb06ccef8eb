import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ApiError, RouteFlags } from '@atrium/platform'
import { forEachDialect, onlyWithPostgres } from '@atrium/platform/testing'
import type { KyselyPlugin, QueryId, QueryResult, UnknownRow } from 'kysely'
import { startGateway } from '../../test/support.ts'
import { canonicalPrefix, compileRouteTable, createRoutes, type Route } from './routes.repository.ts'

async function refused(promise: Promise<unknown>, name: string) {
  await assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.name === name)
}

forEachDialect('routes are added, listed and removed; duplicates conflict', async (t, dialect) => {
  const { store } = await startGateway(t, dialect, { settings: { Modules: { chat: 'http://127.0.0.1:1' } } })
  const route = await store.routes.add({ prefix: '/msg', upstream: 'chat', flags: RouteFlags.AppAuthAndCORS })
  assert.deepEqual({ ...route, id: 0 }, { id: 0, prefix: '/msg/', upstream: 'chat', flags: 1 })
  await refused(store.routes.add({ prefix: '/msg/', upstream: 'chat' }), 'Conflict')
  await store.routes.add({ prefix: '/wallet/', upstream: 'https://wallet.internal:8443/base/' })
  assert.deepEqual(
    (await store.routes.list()).map((row) => [row.prefix, row.upstream]),
    [
      ['/msg/', 'chat'],
      ['/wallet/', 'https://wallet.internal:8443/base'],
    ],
  )
  assert.equal(store.routes.table.match('/msg/v1/send_message')?.id, route.id, 'local changes apply at once')
  assert.equal(await store.routes.remove('/msg'), true)
  assert.equal(await store.routes.remove('/msg/'), false)
  assert.equal(store.routes.table.match('/msg/v1/x'), undefined)
})

/**
 * A Kysely plugin that holds the result of the next read (a SELECT) until `release`: a slow
 * database read. Only that query is held, whatever order the answers of queries running at the
 * same time come back in (on PostgreSQL each may have its own connection).
 */
function holdNextResult() {
  let release = () => {}
  let armed = false
  let held: QueryId | undefined
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (armed && args.node.kind === 'SelectQueryNode') {
        armed = false
        held = args.queryId
      }
      return args.node
    },
    async transformResult(args): Promise<QueryResult<UnknownRow>> {
      if (args.queryId === held) await gate
      return args.result
    },
  }
  return { plugin, arm: () => (armed = true), release }
}

// PostgreSQL only: on SQLite's one connection reads and writes run in order, so a reload that
// began earlier also ended earlier (and this plugin would hold that connection).
test(
  'a reload that ends after a newer one does not bring back the older table (postgres)',
  onlyWithPostgres(),
  async (t) => {
    const { store } = await startGateway(t, 'postgres', { settings: { Modules: { chat: 'http://127.0.0.1:1' } } })
    const held = holdNextResult()
    let tick = Date.now() * 4096
    const routes = createRoutes(store.db.withPlugin(held.plugin), () => ++tick)
    // The interval's reload reads the map before the route is added, and its answer is slow …
    held.arm()
    const slowReload = routes.refresh()
    // … while adding the route reloads the map with it.
    await routes.add({ prefix: '/msg/', upstream: 'chat' })
    assert.ok(routes.table.match('/msg/v1/x'))
    held.release()
    await slowReload
    assert.ok(routes.table.match('/msg/v1/x'), 'the slow reload left the newer table')
  },
)

forEachDialect('bad prefixes, upstreams and flags are refused with InvalidRequest', async (t, dialect) => {
  const { store } = await startGateway(t, dialect, { settings: { Modules: { chat: 'http://127.0.0.1:1' } } })
  const bad: Array<[string, string, number?]> = [
    ['msg/', 'chat'],
    ['/msg/../private/', 'chat'],
    ['/a/..', 'chat'],
    ['/auth/', 'chat'],
    ['/auth', 'chat'],
    ['/AUTH/v1/', 'chat'],
    ['/private/v1/', 'chat'],
    ['/Private/', 'chat'],
    ['/a//b/', 'chat'],
    ['/a b/', 'chat'],
    ['/a%2f/', 'chat'],
    ['/msg/', 'wallet'],
    ['/msg/', 'ftp://host'],
    ['/msg/', 'http://user:pw@host'],
    ['/msg/', 'http://host/?q=1'],
    ['/msg/', ''],
    ['/msg/', 'chat', 8],
    ['/msg/', 'chat', -1],
  ]
  for (const [prefix, upstream, flags] of bad) {
    await refused(store.routes.add({ prefix, upstream, flags }), 'InvalidRequest')
  }
  assert.deepEqual(await store.routes.list(), [])
})

test('the longest prefix wins, matching whole path segments only', () => {
  const route = (id: number, prefix: string): Route => ({ id, prefix, upstream: 'm', flags: 0 })
  const table = compileRouteTable([route(1, '/'), route(2, '/msg/'), route(3, '/msg/v1/call/')])
  assert.equal(table.match('/msg/v1/x')?.id, 2)
  assert.equal(table.match('/msg')?.id, 2)
  assert.equal(table.match('/msg/v1/call/initiate')?.id, 3)
  assert.equal(table.match('/msg/v1/callx')?.id, 2)
  assert.equal(table.match('/msgx')?.id, 1)
  assert.equal(table.match('/private/v1/SendOTP'), undefined, 'even / never covers /private/')
  assert.equal(table.match('/auth/v1/health'), undefined)
  assert.equal(table.match('//private/x'), undefined)
  assert.equal(compileRouteTable([route(2, '/msg/')]).match('/msgx/1'), undefined)
})

test('prefixes have one canonical spelling', () => {
  assert.equal(canonicalPrefix('/msg'), '/msg/')
  assert.equal(canonicalPrefix('/msg/v1/'), '/msg/v1/')
  assert.equal(canonicalPrefix('/'), '/')
  assert.equal(canonicalPrefix('/authors/'), '/authors/', 'only the whole segment is reserved')
  assert.equal(canonicalPrefix('/Msg/V1'), '/msg/v1/', 'prefixes match in any case, so they are kept in one')
  assert.throws(
    () => canonicalPrefix('/a;b/'),
    /characters outside a plain path/,
    'requests are matched without ; parameters',
  )
})
