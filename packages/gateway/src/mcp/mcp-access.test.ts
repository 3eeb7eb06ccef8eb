import assert from 'node:assert/strict'
import test from 'node:test'
import { forEachDialect, json } from '@atrium/platform/testing'
import { connectMcp, MCP_PATH, startMcpStack } from '../../test/mcp.ts'
import { createClock } from '../../test/support.ts'
import { loadGatewayConfig } from '../config.ts'
import { utcDay } from './grants.repository.ts'

const ACCEPT = 'application/json, text/event-stream'

/** A JSON-RPC tools/list request as raw HTTP, with the given headers. */
function listTools(url: string, headers: Record<string, string>) {
  return fetch(`${url}${MCP_PATH}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: ACCEPT, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
  })
}

function errorText(result: unknown) {
  const { content } = result as { content: { text: string }[] }
  return JSON.parse(content[0]!.text).error as { code: number; message: string }
}

forEachDialect('an anonymous caller gets 401 with WWW-Authenticate and a JSON-RPC error', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const response = await listTools(stack.url, {})
  assert.equal(response.status, 401)
  assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="atrium"/)
  const body = await json(response)
  assert.equal(body.jsonrpc, '2.0')
  assert.equal(body.id, null)
  assert.equal(body.error.code, -32001)
  assert.equal(body.error.data.code, 2003)
})

forEachDialect('an expired session and a revoked key get 401, not tools', async (t, dialect) => {
  const clock = createClock()
  const stack = await startMcpStack(t, dialect, { now: clock.now })
  const ann = await stack.user('Ann')
  const key = await stack.userKey(ann.crmId)
  await stack.allow('user', ann.crmId, ['wallet_balance'])
  assert.equal((await listTools(stack.url, ann.bearer)).status, 200)
  assert.equal((await listTools(stack.url, key.headers)).status, 200)

  await stack.store.apiKeys.revoke(key.id)
  const revoked = await listTools(stack.url, key.headers)
  assert.equal(revoked.status, 401)
  assert.match(revoked.headers.get('www-authenticate') ?? '', /error="invalid_token"/)
  const body = await json(revoked)
  assert.equal(body.error.code, -32001)
  assert.equal(body.error.data.code, 2002)

  clock.advance(stack.gateway.config.Sessions.IdleSeconds * 1000)
  const expired = await listTools(stack.url, ann.bearer)
  assert.equal(expired.status, 401)
  assert.equal((await json(expired)).error.data.code, 2002)
  // The same session as a cookie is simply gone: anonymous.
  const cookie = await listTools(stack.url, { Cookie: ann.browser.Cookie, 'X-CSRF-Token': ann.browser['X-CSRF-Token'] })
  assert.equal(cookie.status, 401)
})

forEachDialect('a cookie session needs its CSRF token and the gateway origin', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['wallet_balance'])
  const { Cookie, 'X-CSRF-Token': csrf } = ann.browser

  assert.equal((await listTools(stack.url, { Cookie })).status, 403, 'no CSRF token')
  assert.equal(
    (await listTools(stack.url, { Cookie, 'X-CSRF-Token': csrf, Origin: 'https://evil.example' })).status,
    403,
  )
  const ok = await listTools(stack.url, { Cookie, 'X-CSRF-Token': csrf })
  assert.equal(ok.status, 200)
  assert.deepEqual(
    (await json(ok)).result.tools.map((tool: { name: string }) => tool.name),
    ['wallet_balance'],
  )
})

test('Mcp.AllowedOrigins takes only origins as browsers send them', () => {
  const load = (AllowedOrigins: string[]) =>
    loadGatewayConfig({ ServiceSecret: 'x'.repeat(32), Mcp: { AllowedOrigins } }, {})
  assert.deepEqual(load(['https://app.example', 'http://localhost:5173']).Mcp.AllowedOrigins, [
    'https://app.example',
    'http://localhost:5173',
  ])
  for (const bad of ['https://app.example/', 'app.example', 'HTTPS://App.example', 'ftp://app.example', '*', 'null']) {
    assert.throws(
      () => load([bad]),
      (error: Error) => error.message.includes(`Mcp.AllowedOrigins: ${JSON.stringify(bad)} is not an origin`),
      bad,
    )
  }
})

forEachDialect('a call from an Origin that is not allowed is refused whatever the credentials', async (t, dialect) => {
  const app = 'https://assistant.example'
  const stack = await startMcpStack(t, dialect, { settings: { Mcp: { AllowedOrigins: [app] } } })
  const ann = await stack.user('Ann')
  const key = await stack.userKey(ann.crmId)
  await stack.allow('user', ann.crmId, ['wallet_balance'])
  const own = stack.gateway.config.PublicOrigin
  const call = (headers: Record<string, string>) =>
    fetch(`${stack.url}${MCP_PATH}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: ACCEPT, ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'wallet_balance', arguments: { currency: 'USD' } },
      }),
    })
  const toolCalls = () => stack.walletSeen.filter((request) => !request.url.startsWith('/private/')).length
  const before = Date.now()
  const foreign = ['http://evil.example', 'null', `${own}/`, own.toUpperCase(), `${app}:443`, `${own}.evil.example`]
  for (const credentials of [key.headers, ann.bearer, {}]) {
    for (const origin of foreign) {
      const label = `${origin} ${Object.keys(credentials)}`
      const response = await call({ ...credentials, Origin: origin })
      assert.equal(response.status, 403, label)
      const body = await json(response)
      assert.equal(body.jsonrpc, '2.0', label)
      assert.equal(body.error.data.code, 2004, label)
    }
  }
  assert.equal(toolCalls(), 0, 'no refused call reached the wallet')
  assert.deepEqual(await stack.store.mcpAudit.listSince(before - 1000, 10), [])

  // Without Origin (an assistant, a server), from the gateway's own origin, and from an allowed one.
  for (const origin of [undefined, own, app]) {
    const response = await call({ ...key.headers, ...(origin && { Origin: origin }) })
    assert.equal(response.status, 200, String(origin))
    assert.equal((await json(response)).result.isError, undefined, String(origin))
  }
  assert.equal(toolCalls(), 3)
})

forEachDialect('a tool not granted is refused as a tool error and audited', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['wallet_balance'])
  const client = await connectMcp(t, stack.url, ann.bearer)
  const before = Date.now()

  const refused = await client.callTool({
    name: 'chat_send',
    arguments: { chat_id: '123', content: 'a secret plan' },
  })
  assert.equal(refused.isError, true)
  const error = errorText(refused)
  assert.equal(error.code, 2200)
  assert.match(error.message, /chat_send is not allowed/)
  await client.callTool({ name: 'wallet_balance', arguments: { currency: 'USD' } })

  const audit = await stack.store.mcpAudit.listSince(before - 1000, 10)
  assert.deepEqual(
    audit.map((entry) => [entry.crm_id, entry.key_type, entry.tool, entry.outcome, entry.error_code]),
    [
      [ann.crmId, 'session', 'chat_send', 'refused', 2200],
      [ann.crmId, 'session', 'wallet_balance', 'ok', 0],
    ],
  )
  assert.match(audit[0]!.args_digest, /^[0-9a-f]{64}$/)
  assert.ok(!JSON.stringify(audit).includes('secret plan'), 'the message text is not kept')
  assert.ok(audit.every((entry) => entry.duration_ms >= 0 && entry.created >= before - 1000))
})

forEachDialect("a key's tools are the union of its own, its user's and its app's grants", async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  const key = await stack.userKey(ann.crmId)
  const other = await stack.userKey(ann.crmId)
  await stack.allow('user', ann.crmId, ['wallet_balance'])
  await stack.allow('key', key.id, ['chat_messages'])
  const { app } = await stack.store.apps.create({ name: 'Shop', owner: ann.crmId })
  const { key: serviceKey, row } = await stack.store.apiKeys.create({
    keyType: 'service',
    crmId: 0,
    appId: app.id,
    scopes: [],
    name: 'shop',
  })
  await stack.allow('app', app.id, ['user_info'])

  const names = async (headers: Record<string, string>) =>
    (await (await connectMcp(t, stack.url, headers)).listTools()).tools.map((tool) => tool.name)
  assert.deepEqual(await names(key.headers), ['wallet_balance', 'chat_messages'])
  assert.deepEqual(await names(other.headers), ['wallet_balance'], "another key of the user has only the user's")
  assert.deepEqual(await names(ann.bearer), ['wallet_balance'])
  assert.deepEqual(await names({ 'X-Api-Key': serviceKey }), ['user_info'])
  await stack.allow('key', row.id, ['wallet_transactions'])
  assert.deepEqual(await names({ 'X-Api-Key': serviceKey }), ['wallet_transactions', 'user_info'])

  // Denying takes the tool away at once.
  assert.equal(await stack.store.mcpGrants.deny({ kind: 'user', id: ann.crmId }, 'wallet_balance'), 1)
  assert.deepEqual(await names(ann.bearer), [])
})

forEachDialect('the sweep drops audit rows past the retention and old send records', async (t, dialect) => {
  const clock = createClock()
  const stack = await startMcpStack(t, dialect, { now: clock.now, settings: { Mcp: { AuditRetentionDays: 30 } } })
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['wallet_balance', 'wallet_send'], { currency: 'USD', perDay: 10 })
  await stack.wallet.deposit(ann.crmId, 'USD', 10)
  // A key: the session would end after a week of this clock.
  const client = await connectMcp(t, stack.url, (await stack.userKey(ann.crmId)).headers)
  const bob = await stack.user('Bob')
  await client.callTool({
    name: 'wallet_send',
    arguments: { to: String(bob.crmId), currency: 'USD', amount: 1, idempotency_key: 'old' },
  })
  const sendDay = utcDay(clock.now())

  clock.advance(8 * 86_400_000)
  await client.callTool({ name: 'wallet_balance', arguments: { currency: 'USD' } })
  await stack.gateway.app.sweepMcp()
  assert.equal(await stack.store.mcpGrants.spent({ kind: 'user', id: ann.crmId }, 'USD', sendDay), 0, 'old counters go')
  assert.equal((await stack.store.mcpAudit.listSince(0, 10)).length, 2, 'the audit is kept for 30 days')

  clock.advance(25 * 86_400_000)
  await stack.gateway.app.sweepMcp()
  assert.deepEqual(
    (await stack.store.mcpAudit.listSince(0, 10)).map((entry) => entry.tool),
    ['wallet_balance'],
    'only the entry younger than 30 days is left',
  )
})
