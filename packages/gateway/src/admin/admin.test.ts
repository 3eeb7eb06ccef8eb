import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { nextLink, startPanel, tableRows } from '../../test/admin.ts'

const PAGES = [
  '/ProxyAdmin',
  '/ProxyAdmin/Users',
  '/ProxyAdmin/UserDetail?CrmId=1',
  '/ProxyAdmin/Routes',
  '/ProxyAdmin/LoginAudit',
  '/ProxyAdmin/PushSubscriptions',
  '/ProxyAdmin/StunMonitor',
  '/ProxyAdmin/Actions',
  '/ProxyAdmin/Apps',
  '/ProxyAdmin/AppDetail?Id=1',
  '/ProxyAdmin/Domains',
  '/ProxyAdmin/Partners',
  '/ProxyAdmin/Settings',
  '/ProxyAdmin/NoSuchPage',
]
const ACTIONS: [string, Record<string, string>][] = [
  ['/ProxyAdmin/UserDetail/RevokeSession', { CrmId: '1', Session: '0123456789abcdef' }],
  ['/ProxyAdmin/UserDetail/RevokeApiKey', { CrmId: '1', Key: '1' }],
  ['/ProxyAdmin/Routes/Save', { Mode: 'add', Prefix: '/taken/', Upstream: 'http://127.0.0.1:9' }],
  ['/ProxyAdmin/Routes/Remove', { Prefix: '/kept/' }],
  ['/ProxyAdmin/PushSubscriptions/Test', { Subscription: '1' }],
  ['/ProxyAdmin/UserDetail/Scopes', { CrmId: '1', Scopes: 'admin' }],
  ['/ProxyAdmin/UserDetail/ContactVerified', { CrmId: '1', Contact: '1', Verified: 'true' }],
  ['/ProxyAdmin/AppDetail/Flags', { Id: '1', AppAuthAndCORS: 'true' }],
  ['/ProxyAdmin/AppDetail/Origins', { Id: '1', Origins: 'https://evil.example' }],
  ['/ProxyAdmin/AppDetail/RotateSecret', { Id: '1' }],
  ['/ProxyAdmin/AppDetail/RotateWebhookSecret', { Id: '1' }],
  ['/ProxyAdmin/Domains/Add', { Domain: 'evil.example.com' }],
  ['/ProxyAdmin/Domains/Check', { Domain: 'evil.example.com' }],
  ['/ProxyAdmin/Domains/Remove', { Domain: 'evil.example.com' }],
  [
    '/ProxyAdmin/Partners/Add',
    { Id: 'evil', Name: 'Evil', Issuer: 'https://evil.example', ClientId: 'a', ClientSecret: 'b' },
  ],
  ['/ProxyAdmin/Partners/Scopes', { Id: 'evil', Scopes: 'openid' }],
  ['/ProxyAdmin/Partners/Remove', { Id: 'evil' }],
]

forEachDialect('an anonymous browser is sent to sign in and back, from every page and action', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  for (const path of PAGES) {
    const answer = await panel.page(path)
    assert.equal(answer.status, 303, path)
    assert.equal(answer.location, `/chat/sign-in?next=${encodeURIComponent(path)}`, path)
  }
  for (const [path, form] of ACTIONS) {
    const answer = await panel.post(path, form)
    assert.equal(answer.status, 303, path)
    const page = path.slice(0, path.lastIndexOf('/'))
    assert.equal(answer.location, `/chat/sign-in?next=${encodeURIComponent(page)}`, path)
  }
})

forEachDialect(
  'a signed-in user without the admin scope gets 403 on every page and action, and changes nothing',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    await panel.store.routes.add({ prefix: '/kept/', upstream: 'http://127.0.0.1:9' })
    for (const path of PAGES) {
      const answer = await panel.page(path, panel.member)
      assert.equal(answer.status, 403, path)
      assert.match(answer.html, /You need the admin scope/, path)
      assert.equal(answer.response.headers.get('content-type'), 'text/html; charset=utf-8')
    }
    for (const [path, form] of ACTIONS) {
      const answer = await panel.post(path, form, panel.member)
      assert.equal(answer.status, 403, path)
      assert.match(answer.body, /You need the admin scope/, path)
    }
    assert.deepEqual(
      (await panel.store.routes.list()).map((route) => route.prefix),
      ['/kept/'],
    )
    assert.equal((await panel.page('/ProxyAdmin/Actions', panel.operator)).html.includes('<tbody>'), false)
  },
)

forEachDialect('an operator sees every page in the shell, under the strict CSP', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const root = await panel.page('/ProxyAdmin', panel.operator)
  assert.equal(root.status, 303)
  assert.equal(root.location, '/ProxyAdmin/Users')
  for (const path of PAGES.slice(1, -1)) {
    const answer = await panel.page(path, panel.operator)
    // An unknown user or app id sends the detail page back to the list.
    if (path.startsWith('/ProxyAdmin/UserDetail') || path.startsWith('/ProxyAdmin/AppDetail')) {
      assert.equal(answer.status, 303)
      assert.match(answer.location, /^\/ProxyAdmin\/(Users|Apps)\?error=/)
      continue
    }
    assert.equal(answer.status, 200, path)
    assert.match(answer.response.headers.get('content-security-policy') ?? '', /default-src 'none'/)
    assert.match(answer.response.headers.get('content-security-policy') ?? '', /(^|; )frame-ancestors 'none'(;|$)/)
    assert.match(answer.html, /<header><strong>Atrium gateway<\/strong>/)
    assert.doesNotMatch(answer.html, /<script/)
  }
  const missing = await panel.page('/ProxyAdmin/NoSuchPage', panel.operator)
  assert.equal(missing.status, 404)
  assert.match(missing.html, /no such operator page/)
})

forEachDialect('operator forms pass from the gateway’s own pages only', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const form = { Mode: 'add', Prefix: '/new/', Upstream: 'http://127.0.0.1:9' }
  const prefixes = async () => (await panel.store.routes.list()).map((route) => route.prefix)
  const own = panel.config.PublicOrigin
  const refused: { name: string; headers: Record<string, string> }[] = [
    { name: 'a foreign Origin', headers: { origin: 'https://evil.example' } },
    { name: 'no Origin', headers: {} },
    { name: 'Sec-Fetch-Site cross-site', headers: { origin: own, 'sec-fetch-site': 'cross-site' } },
    { name: 'Sec-Fetch-Site same-site', headers: { origin: own, 'sec-fetch-site': 'same-site' } },
  ]
  for (const attempt of refused) {
    const call = await fetch(`${panel.url}/ProxyAdmin/Routes/Save`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: panel.operator.cookie,
        ...attempt.headers,
      },
      body: new URLSearchParams(form).toString(),
    })
    assert.equal(call.status, 403, attempt.name)
    const body = (await call.json()) as { error: { code: number } }
    assert.equal(body.error.code, errorCodes.CsrfRejected.code, attempt.name)
    assert.deepEqual(await prefixes(), [], attempt.name)
  }
  // A JSON body to the same path keeps the token rule: Origin alone does not do.
  const json = await fetch(`${panel.url}/ProxyAdmin/Routes/Save`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/json', cookie: panel.operator.cookie, origin: panel.config.PublicOrigin },
    body: JSON.stringify(form),
  })
  assert.equal(json.status, 403)
  assert.deepEqual(await prefixes(), [])
  // The same form from the gateway's own page, as a browser sends it.
  const accepted = await panel.post('/ProxyAdmin/Routes/Save', form, panel.operator, {
    'sec-fetch-site': 'same-origin',
  })
  assert.equal(accepted.status, 303)
  assert.deepEqual(await prefixes(), ['/new/'])
})

forEachDialect('every action is recorded with who, what, target and outcome, and the log pages', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const saved = await panel.post(
    '/ProxyAdmin/Routes/Save',
    { Mode: 'add', Prefix: '/a/', Upstream: 'http://127.0.0.1:9' },
    panel.operator,
  )
  assert.equal(saved.status, 303)
  const refused = await panel.post('/ProxyAdmin/Routes/Remove', { Prefix: '/missing/' }, panel.operator)
  assert.equal(refused.status, 303)
  assert.equal(
    refused.location,
    `/ProxyAdmin/Routes?error=${encodeURIComponent('No route for /missing/.').replaceAll('%20', '+')}`,
  )
  for (let index = 0; index < 3; index++) {
    await panel.post('/ProxyAdmin/Routes/Remove', { Prefix: `/gone-${index}/` }, panel.operator)
  }
  const first = await panel.page('/ProxyAdmin/Actions?Limit=3', panel.operator)
  const rows = tableRows(first.html)
  assert.equal(rows.length, 3)
  assert.match(rows[0]!, /Olive Operator \(\d+\) route\.remove \/gone-2\/ .*No route for \/gone-2\//)
  const next = nextLink(first.html)
  assert.ok(next)
  const second = tableRows((await panel.page(next, panel.operator)).html)
  assert.equal(second.length, 2)
  assert.match(second[0]!, /route\.remove \/missing\/ .*No route for \/missing\//)
  assert.match(second[1]!, /route\.save \/a\/ http:\/\/127\.0\.0\.1:9, no flags ok$/)
  // By operator: another operator's actions are left out.
  const other = await panel.browserOf('Otto Other', ['admin'])
  await panel.post('/ProxyAdmin/Routes/Remove', { Prefix: '/a/' }, other)
  const mine = tableRows((await panel.page(`/ProxyAdmin/Actions?Operator=${other.crmId}`, panel.operator)).html)
  assert.equal(mine.length, 1)
  assert.match(mine[0]!, /Otto Other \(\d+\) route\.remove \/a\/ +ok$/)
})

forEachDialect('an API key with the admin scope does not open the panel', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const { key } = await panel.store.apiKeys.create({
    keyType: 'user',
    crmId: panel.operator.crmId,
    appId: 0,
    scopes: ['admin'],
    name: 'ops script',
  })
  const bearer = { authorization: `Bearer ${key}` }
  const page = await fetch(`${panel.url}/ProxyAdmin/Users`, { headers: bearer })
  assert.equal(page.status, 403)
  const form = { Mode: 'add', Prefix: '/k/', Upstream: 'http://127.0.0.1:9' }
  const action = await panel.post('/ProxyAdmin/Routes/Save', form, undefined, bearer)
  assert.equal(action.status, 403)
  assert.deepEqual(await panel.store.routes.list(), [])
})
