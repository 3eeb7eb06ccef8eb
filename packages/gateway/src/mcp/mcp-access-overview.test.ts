import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { connectMcp, startMcpStack } from '../../test/mcp.ts'
import { startGateway } from '../../test/support.ts'
import { utcDay } from './grants.repository.ts'

const ACCESS = '/auth/v1/mcp/access'

type Result = { isError?: boolean; content: { text: string }[] }

forEachDialect(
  'the access overview shows the user’s and each key’s tools, limits and today’s spending',
  async (t, dialect) => {
    const stack = await startMcpStack(t, dialect)
    const ann = await stack.user('Ann')
    const bob = await stack.user('Bob')
    const annKey = await stack.userKey(ann.crmId)
    const bobKey = await stack.userKey(bob.crmId)
    await stack.allow('user', ann.crmId, ['wallet_balance', 'wallet_send'], {
      currency: 'USD',
      perCall: 50,
      perDay: 200,
    })
    await stack.allow('key', annKey.id, ['chat_send', 'wallet_send'], { currency: 'USD', perDay: 30 })
    // Bob's grants and key: never in Ann's overview.
    await stack.allow('user', bob.crmId, ['user_info', 'wallet_send'], { currency: 'USD', perDay: 90 })
    await stack.allow('key', bobKey.id, ['chat_messages'])
    await stack.wallet.deposit(ann.crmId, 'USD', 100)
    await stack.wallet.deposit(bob.crmId, 'USD', 100)

    const sends = [12.5, 7.25]
    const annClient = await connectMcp(t, stack.url, annKey.headers)
    for (const [index, amount] of sends.entries()) {
      const result = (await annClient.callTool({
        name: 'wallet_send',
        arguments: { to: String(bob.crmId), currency: 'USD', amount, idempotency_key: `ann-${index}` },
      })) as Result
      assert.equal(result.isError, undefined, result.content[0]?.text)
    }
    const bobClient = await connectMcp(t, stack.url, bobKey.headers)
    const bobSend = (await bobClient.callTool({
      name: 'wallet_send',
      arguments: { to: String(ann.crmId), currency: 'USD', amount: 40, idempotency_key: 'bob-0' },
    })) as Result
    assert.equal(bobSend.isError, undefined, bobSend.content[0]?.text)
    const annSpent = sends.reduce((sum, amount) => sum + amount, 0)

    const response = await fetch(`${stack.url}${ACCESS}`, { headers: ann.browser })
    assert.equal(response.status, 200)
    const { result } = await json(response)
    const shownKey = result.keys[0]
    assert.deepEqual(result, {
      endpoint: new URL('/auth/v1/mcp', stack.gateway.config.PublicOrigin).href,
      day: utcDay(Date.now()),
      tools: [
        { name: 'wallet_balance', title: 'Wallet balance', grantedTo: ['user'], sends: [] },
        {
          name: 'wallet_send',
          title: 'Send money',
          grantedTo: ['user'],
          sends: [
            {
              grantedTo: 'user',
              currency: 'USD',
              perCall: 50,
              perDay: 200,
              spentToday: [{ currency: 'USD', amount: annSpent }],
            },
          ],
        },
      ],
      keys: [
        {
          id: String(annKey.id),
          name: 'assistant',
          prefix: shownKey.prefix,
          created: shownKey.created,
          lastUsed: shownKey.lastUsed,
          tools: [
            {
              name: 'wallet_send',
              title: 'Send money',
              grantedTo: ['key'],
              sends: [
                {
                  grantedTo: 'key',
                  currency: 'USD',
                  perCall: 0,
                  perDay: 30,
                  spentToday: [{ currency: 'USD', amount: annSpent }],
                },
              ],
            },
            { name: 'chat_send', title: 'Send a chat message', grantedTo: ['key'], sends: [] },
          ],
        },
      ],
    })
    const stored = await stack.store.apiKeys.get(annKey.id)
    assert.equal(shownKey.prefix, stored?.prefix)
    assert.equal(shownKey.created, stored?.created)
    assert.ok(annKey.key.startsWith(`atr_${shownKey.prefix}_`))
    assert.ok(shownKey.lastUsed > 0, 'the key was used for the sends')
    assert.doesNotMatch(JSON.stringify(result), new RegExp(`${bobKey.id}|user_info|chat_messages`))
  },
)

forEachDialect('a revoked key leaves the overview; a grant taken away leaves it at once', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  const kept = await stack.userKey(ann.crmId)
  const revoked = await stack.userKey(ann.crmId)
  await stack.allow('user', ann.crmId, ['wallet_balance', 'chat_send'])
  await stack.store.apiKeys.revoke(revoked.id)
  await stack.store.mcpGrants.deny({ kind: 'user', id: ann.crmId }, 'chat_send')

  const { result } = await json(await fetch(`${stack.url}${ACCESS}`, { headers: ann.browser }))
  assert.deepEqual(
    result.tools.map((tool: { name: string }) => tool.name),
    ['wallet_balance'],
  )
  assert.deepEqual(
    result.keys.map((key: { id: string }) => key.id),
    [String(kept.id)],
  )
})

forEachDialect('only a signed-in session sees the overview: anonymous and API keys get 401', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  const key = await stack.userKey(ann.crmId)
  await stack.allow('key', key.id, ['wallet_balance'])

  for (const headers of [{}, key.headers]) {
    const response = await fetch(`${stack.url}${ACCESS}`, { headers })
    assert.equal(response.status, 401)
    const body = await json(response)
    assert.equal(body.error.code, errorCodes.SessionRequired.code)
    assert.equal(body.result, undefined)
  }
  // The session token as a bearer is the user's session too.
  const bearer = await fetch(`${stack.url}${ACCESS}`, { headers: ann.bearer })
  assert.equal(bearer.status, 200)
  assert.equal((await json(bearer)).result.keys[0].id, String(key.id))
})

forEachDialect('with MCP turned off the overview answers 404 in the envelope', async (t, dialect) => {
  const gateway = await startGateway(t, dialect, { settings: { Mcp: { Enabled: false } } })
  const user = await gateway.store.users.create({ name: 'Ann' })
  const { token } = await gateway.store.sessions.create({
    crmId: user.crm_id,
    method: 'email_otp',
    ip: '127.0.0.1',
    userAgent: 'test',
  })
  const response = await fetch(`${gateway.url}${ACCESS}`, {
    headers: { Cookie: `${gateway.config.Sessions.CookieName}=${token}` },
  })
  assert.equal(response.status, 404)
  const body = await json(response)
  assert.equal(body.error.code, errorCodes.NotFound.code)
  assert.match(body.error.message, /turned off/)
})

forEachDialect('a key name with control characters is refused and no key is made', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  for (const name of ['Claude\u0000', 'line\nbreak', '\u007f']) {
    const response = await fetch(`${stack.url}/auth/v1/keys`, {
      method: 'POST',
      headers: { ...ann.browser, Origin: stack.gateway.config.PublicOrigin },
      body: JSON.stringify({ name }),
    })
    assert.equal(response.status, 400, name)
    assert.equal((await json(response)).error.code, errorCodes.InvalidRequest.code)
  }
  assert.deepEqual(await stack.store.apiKeys.list({ crmId: ann.crmId }), [])
  const made = await fetch(`${stack.url}/auth/v1/keys`, {
    method: 'POST',
    headers: { ...ann.browser, Origin: stack.gateway.config.PublicOrigin },
    body: JSON.stringify({ name: 'Claude on my laptop — ünïcode' }),
  })
  assert.equal(made.status, 200)
  assert.equal((await json(made)).result.apiKey.name, 'Claude on my laptop — ünïcode')
})
