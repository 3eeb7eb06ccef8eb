import assert from 'node:assert/strict'
import { RouteFlags } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { startPanel, tableRows } from '../../test/admin.ts'
import { startEchoUpstream } from '../../test/upstream.ts'

forEachDialect('a route added, changed and removed in the panel is what the proxy follows next', async (t, dialect) => {
  const upstream = await startEchoUpstream(t)
  const panel = await startPanel(t, dialect, { settings: { Modules: { echo: upstream.url } } })
  const visit = () => fetch(`${panel.url}/shop/items`, { redirect: 'manual' })
  assert.equal((await visit()).status, 404)

  const added = await panel.post(
    '/ProxyAdmin/Routes/Save',
    { Mode: 'add', Prefix: '/Shop', Upstream: 'echo' },
    panel.operator,
  )
  assert.equal(added.status, 303)
  assert.equal(
    added.location,
    `/ProxyAdmin/Routes?${new URLSearchParams({ notice: 'Route /shop/ → echo (no flags) saved.' })}`,
  )
  const open = await visit()
  assert.equal(open.status, 200)
  assert.equal(((await open.json()) as { url: string }).url, '/shop/items')

  const page = await panel.page('/ProxyAdmin/Routes', panel.operator)
  assert.deepEqual(
    tableRows(page.html).map((row) => row.split(' ')[0]),
    ['/shop/'],
  )
  assert.match(page.html, /<input id="route-0-upstream" form="route-0" name="Upstream" value="echo"\/>/)

  // Edited: RequireSession now keeps anonymous callers out.
  const locked = await panel.post(
    '/ProxyAdmin/Routes/Save',
    { Mode: 'edit', Prefix: '/shop/', Upstream: 'echo', RequireSession: 'true' },
    panel.operator,
  )
  assert.match(locked.location, /notice=Route\+%2Fshop%2F\+%E2%86%92\+echo\+%28RequireSession%29\+saved/)
  assert.deepEqual(
    (await panel.store.routes.list()).map((route) => [route.prefix, route.flags]),
    [['/shop/', RouteFlags.RequireSession]],
  )
  assert.equal((await visit()).status, 401)

  const removed = await panel.post('/ProxyAdmin/Routes/Remove', { Prefix: '/shop/' }, panel.operator)
  assert.match(removed.location, /notice=Route\+%2Fshop%2F\+removed/)
  assert.equal((await visit()).status, 404)
  assert.match((await panel.page('/ProxyAdmin/Routes', panel.operator)).html, /No route yet/)
})

forEachDialect(
  'the route map refuses what the CLI refuses, and a refused change changes nothing',
  async (t, dialect) => {
    const upstream = await startEchoUpstream(t)
    const panel = await startPanel(t, dialect, { settings: { Modules: { echo: upstream.url } } })
    await panel.store.routes.add({ prefix: '/msg/', upstream: 'echo' })
    const attempts: [Record<string, string>, RegExp][] = [
      [{ Mode: 'add', Prefix: '/auth/x', Upstream: 'echo' }, /reserved/],
      [{ Mode: 'add', Prefix: '/msg/', Upstream: 'echo' }, /already exists/],
      [{ Mode: 'add', Prefix: '/x/', Upstream: 'nosuchmodule' }, /not a module named in the Modules setting/],
      [{ Mode: 'add', Prefix: '/x/', Upstream: 'ftp://10.0.0.1' }, /http\(s\)/],
      [{ Mode: 'edit', Prefix: '/none/', Upstream: 'echo' }, /no route for \/none\//],
      [{ Mode: 'edit', Prefix: '/msg/', Upstream: 'http://u:p@10.0.0.1' }, /without credentials/],
    ]
    for (const [form, reason] of attempts) {
      const answer = await panel.post('/ProxyAdmin/Routes/Save', form, panel.operator)
      assert.equal(answer.status, 303)
      const error = new URL(answer.location, panel.url).searchParams.get('error') ?? ''
      assert.match(error, reason, JSON.stringify(form))
      const shown = await panel.page(answer.location, panel.operator)
      assert.match(shown.html, /<p class="notice error" role="status">/)
    }
    assert.deepEqual(
      (await panel.store.routes.list()).map((route) => [route.prefix, route.upstream, route.flags]),
      [['/msg/', 'echo', 0]],
    )
  },
)
