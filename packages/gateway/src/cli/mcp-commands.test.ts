import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect } from '@atrium/platform/testing'
import { SERVICE_SECRET } from '../../test/support.ts'
import { loadGatewayConfig } from '../config.ts'
import { openGatewayStore } from '../store.ts'
import { runCli } from './cli.ts'

/** The CLI in this process on a fresh gateway database, and a store on the same database to check what it wrote. */
async function setup(t: TestContext, dialect: DatabaseDialect) {
  const env = { GatewayDB: await createTestDatabaseUrl(t, dialect), ServiceSecret: SERVICE_SECRET }
  const run = async (...args: string[]) => {
    let stdout = ''
    let stderr = ''
    const code = await runCli(args, env, {
      out: (text) => (stdout += `${text}\n`),
      err: (text) => (stderr += `${text}\n`),
    })
    return { code, stdout, stderr }
  }
  const runJson = async (...args: string[]) => {
    const result = await run(...args, '--json')
    assert.equal(result.code, 0, `atrium ${args.join(' ')}: ${result.stderr}`)
    return JSON.parse(result.stdout)
  }
  const store = await openGatewayStore(loadGatewayConfig(env, {}), { node: 1 })
  t.after(() => store.close())
  return { run, runJson, store }
}

forEachDialect('atrium mcp allow, list and deny manage the whitelist the gateway reads', async (t, dialect) => {
  const { run, runJson, store } = await setup(t, dialect)
  const user = await store.users.create({ name: 'Ann' })
  const { row: key } = await store.apiKeys.create({
    keyType: 'user',
    crmId: user.crm_id,
    appId: 0,
    scopes: [],
    name: 'bot',
  })

  const allowed = await runJson('mcp', 'allow', '--user', String(user.crm_id), '--tool', 'wallet_balance,chat_send')
  assert.deepEqual(
    allowed.grants.map((grant: { subject: string; tool: string }) => [grant.subject, grant.tool]),
    [
      [`user:${user.crm_id}`, 'wallet_balance'],
      [`user:${user.crm_id}`, 'chat_send'],
    ],
  )
  const limited = await runJson(
    ...['mcp', 'allow', '--key', String(key.id), '--tool', 'wallet_send'],
    ...['--currency', 'USD', '--per-call', '25.5', '--per-day', '100'],
  )
  assert.deepEqual(limited.grants[0], {
    subject: `key:${key.id}`,
    tool: 'wallet_send',
    currency: 'USD',
    perCall: 25.5,
    perDay: 100,
    created: limited.grants[0].created,
  })
  // Allowing again changes the limits of the same grant.
  await runJson(
    'mcp',
    'allow',
    '--key',
    String(key.id),
    '--tool',
    'wallet_send',
    '--currency',
    'USD',
    '--per-day',
    '50',
  )
  const [sendGrant] = await store.mcpGrants.sendGrants([{ kind: 'key', id: key.id }], 'USD')
  assert.deepEqual([sendGrant?.per_call, sendGrant?.per_day], [0, 5000])

  const tools = await store.mcpGrants.toolsOf([
    { kind: 'user', id: user.crm_id },
    { kind: 'key', id: key.id },
  ])
  assert.deepEqual([...tools].sort(), ['chat_send', 'wallet_balance', 'wallet_send'])

  const listed = await run('mcp', 'list', '--user', String(user.crm_id))
  assert.equal(listed.code, 0)
  assert.match(listed.stdout, /SUBJECT\s+TOOL\s+CURRENCY/)
  assert.match(listed.stdout, new RegExp(`user:${user.crm_id}\\s+chat_send`))
  assert.doesNotMatch(listed.stdout, /wallet_send/)

  const denied = await runJson('mcp', 'deny', '--user', String(user.crm_id), '--tool', 'chat_send')
  assert.equal(denied.removed, 1)
  assert.deepEqual([...(await store.mcpGrants.toolsOf([{ kind: 'user', id: user.crm_id }]))], ['wallet_balance'])
  const again = await run('mcp', 'deny', '--user', String(user.crm_id), '--tool', 'chat_send')
  assert.equal(again.code, 2)
})

forEachDialect('atrium mcp refuses grants it cannot make sense of', async (t, dialect) => {
  const { run, store } = await setup(t, dialect)
  const user = await store.users.create()
  const id = String(user.crm_id)
  const refusals: [string[], number, RegExp][] = [
    [['mcp', 'allow', '--tool', 'wallet_balance'], 1, /exactly one of --user/],
    [['mcp', 'allow', '--user', id, '--app', '5', '--tool', 'wallet_balance'], 1, /exactly one of --user/],
    [['mcp', 'allow', '--user', id], 1, /--tool is required/],
    [['mcp', 'allow', '--user', id, '--tool', 'wallet_steal'], 1, /unknown tool "wallet_steal"/],
    [['mcp', 'allow', '--user', id, '--tool', 'wallet_send', '--per-day', '10'], 1, /need --currency/],
    [['mcp', 'allow', '--user', id, '--tool', 'chat_send', '--currency', 'USD'], 1, /wallet_send only/],
    [['mcp', 'allow', '--user', id, '--tool', 'wallet_send', '--currency', 'usd'], 1, /--currency must be/],
    [
      ['mcp', 'allow', '--user', id, '--tool', 'wallet_send', '--currency', 'USD', '--per-call', '1.005'],
      1,
      /two decimals/,
    ],
    [['mcp', 'allow', '--user', id, '--tool', 'wallet_send', '--currency', 'USD', '--per-call=-1'], 1, /positive/],
    [['mcp', 'allow', '--user', '42', '--tool', 'wallet_balance'], 2, /no user 42/],
    [['mcp', 'allow', '--key', '42', '--tool', 'wallet_balance'], 2, /no active key 42/],
    [['mcp', 'audit', '--since', 'yesterday'], 1, /--since must be/],
  ]
  for (const [args, code, message] of refusals) {
    const result = await run(...args)
    assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`)
    assert.match(result.stderr, message, args.join(' '))
  }
  assert.deepEqual(await store.mcpGrants.list(), [], 'nothing was granted')
})

forEachDialect('atrium mcp audit lists the calls since a time, without their arguments', async (t, dialect) => {
  const { run, runJson, store } = await setup(t, dialect)
  const entry = {
    crmId: 1001,
    appId: 0,
    keyId: 0,
    keyType: 'session',
    argsDigest: 'ab'.repeat(32),
    durationMs: 12,
  }
  await store.mcpAudit.record({ ...entry, tool: 'chat_send', outcome: 'refused', errorCode: 2200 })
  await store.mcpAudit.record({ ...entry, tool: 'wallet_balance', outcome: 'ok', errorCode: 0 })

  const listed = await runJson('mcp', 'audit', '--since', '1h')
  assert.deepEqual(
    listed.entries.map((item: { crmId: string; tool: string; outcome: string; errorCode: number }) => [
      item.crmId,
      item.tool,
      item.outcome,
      item.errorCode,
    ]),
    [
      ['1001', 'chat_send', 'refused', 2200],
      ['1001', 'wallet_balance', 'ok', 0],
    ],
  )
  const text = await run('mcp', 'audit')
  assert.match(text.stdout, /chat_send\s+refused\s+2200\s+12 ms\s+abababababab/)
  const future = await runJson('mcp', 'audit', '--since', new Date(Date.now() + 3_600_000).toISOString())
  assert.deepEqual(future.entries, [])
})
