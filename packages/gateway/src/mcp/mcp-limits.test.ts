import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { connectMcp, startMcpStack } from '../../test/mcp.ts'
import { utcDay } from './grants.repository.ts'

type Result = { isError?: boolean; content: unknown; structuredContent?: Record<string, unknown> }

function errorCode(result: Result): number {
  return JSON.parse((result.content as { text: string }[])[0]!.text).error.code
}

/**
 * Ann, granted wallet_send in USD within `limits` and holding `deposit` USD, and Bob to pay: the
 * stack, both people, Ann's MCP client, and `send`, a wallet_send from it to Bob.
 */
async function annPaysBob(
  t: TestContext,
  dialect: DatabaseDialect,
  limits: { perCall?: number; perDay?: number },
  deposit: number,
) {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  const bob = await stack.user('Bob')
  await stack.allow('user', ann.crmId, ['wallet_send'], { currency: 'USD', ...limits })
  await stack.wallet.deposit(ann.crmId, 'USD', deposit)
  const client = await connectMcp(t, stack.url, ann.bearer)
  const send = (amount: number, key: string, currency = 'USD') =>
    client.callTool({
      name: 'wallet_send',
      arguments: { to: String(bob.crmId), currency, amount, idempotency_key: key },
    }) as Promise<Result>
  return { stack, ann, bob, client, send }
}

forEachDialect('wallet_send above the per-call limit is refused and moves nothing', async (t, dialect) => {
  const { stack, bob, send } = await annPaysBob(t, dialect, { perCall: 5 }, 100)

  const over = await send(5.01, 'a')
  assert.equal(over.isError, true)
  assert.equal(errorCode(over), 2201)
  // The grant covers USD only.
  assert.equal(errorCode(await send(1, 'b', 'EUR')), 2200)
  const ok = await send(5, 'c')
  assert.equal(ok.isError, undefined, JSON.stringify(ok.content))
  assert.deepEqual(await stack.wallet.user(bob.crmId).read('balance', { currency: 'USD' }), {
    currency: 'USD',
    balance: 5,
    hold: 0,
    available: 5,
  })
  const audit = await stack.store.mcpAudit.listSince(0, 10)
  assert.deepEqual(
    audit.map((entry) => [entry.outcome, entry.error_code]),
    [
      ['refused', 2201],
      ['refused', 2200],
      ['ok', 0],
    ],
  )
})

forEachDialect(
  'a first wallet_send of the day above the per-day limit is refused and moves nothing',
  async (t, dialect) => {
    const { stack, ann, bob, send } = await annPaysBob(t, dialect, { perDay: 10 }, 100)
    const balance = async (crmId: number) =>
      (await stack.wallet.user(crmId).read('balance', { currency: 'USD' })).balance as number
    const sendsSeen = () => stack.walletSeen.filter((request) => request.url === '/wallet/v1/send').length

    const over = await send(10.01, 'big')

    assert.equal(over.isError, true)
    assert.equal(errorCode(over), 2202)
    assert.equal(sendsSeen(), 0, 'the wallet was not asked')
    assert.deepEqual([await balance(ann.crmId), await balance(bob.crmId)], [100, 0])
    const listed = await stack.wallet.user(ann.crmId).read('transactions', { currency: 'USD' })
    assert.deepEqual(
      listed.transactions.map((tx: { amount: number }) => tx.amount),
      [100],
      'the deposit only',
    )
    assert.equal(await stack.store.mcpGrants.spent({ kind: 'user', id: ann.crmId }, 'USD', utcDay(Date.now())), 0)
    // The whole limit in one send is allowed: the refusal was for the cent above it.
    const whole = await send(10, 'whole')
    assert.equal(whole.isError, undefined, JSON.stringify(whole.content))
    assert.deepEqual([await balance(ann.crmId), await balance(bob.crmId)], [90, 10])
  },
)

forEachDialect('parallel wallet_send calls never take a day over its limit', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  const bob = await stack.user('Bob')
  const key = await stack.userKey(ann.crmId)
  await stack.allow('user', ann.crmId, ['wallet_send'], { currency: 'USD', perDay: 10 })
  await stack.wallet.deposit(ann.crmId, 'USD', 100)
  const clients = await Promise.all(Array.from({ length: 4 }, () => connectMcp(t, stack.url, key.headers)))

  const results = (await Promise.all(
    Array.from({ length: 8 }, (_, index) =>
      clients[index % clients.length]!.callTool({
        name: 'wallet_send',
        arguments: { to: String(bob.crmId), currency: 'USD', amount: 3, idempotency_key: `par-${index}` },
      }),
    ),
  )) as Result[]
  const sent = results.filter((result) => !result.isError)
  assert.equal(sent.length, 3, '3 × 3 fits in 10, a fourth does not')
  assert.deepEqual(results.filter((result) => result.isError).map(errorCode), Array(5).fill(2202))
  assert.equal((await stack.wallet.user(bob.crmId).read('balance', { currency: 'USD' })).balance, 9)
  const day = utcDay(Date.now())
  assert.equal(await stack.store.mcpGrants.spent({ kind: 'user', id: ann.crmId }, 'USD', day), 900)
  // The key has no limit of its own: nothing is counted for it.
  assert.equal(await stack.store.mcpGrants.spent({ kind: 'key', id: key.id }, 'USD', day), 0)
})

forEachDialect('a send the wallet refuses does not use up the day', async (t, dialect) => {
  const { stack, ann, send } = await annPaysBob(t, dialect, { perDay: 10 }, 2)

  const poor = await send(8, 'k1')
  assert.equal(errorCode(poor), 4000, 'InsufficientFunds from the wallet')
  assert.equal(await stack.store.mcpGrants.spent({ kind: 'user', id: ann.crmId }, 'USD', utcDay(Date.now())), 0)
  await stack.wallet.deposit(ann.crmId, 'USD', 20)
  const retried = await send(8, 'k1')
  assert.equal(retried.isError, undefined, JSON.stringify(retried.content))
})

forEachDialect('a replayed idempotency key makes one transfer and is counted once', async (t, dialect) => {
  const { stack, ann, bob, client, send: sendAs } = await annPaysBob(t, dialect, { perDay: 10 }, 20)
  const key = 'gift:2026-11-26'
  const send = (amount: number) => sendAs(amount, key)
  const sendsSeen = () => stack.walletSeen.filter((request) => request.url === '/wallet/v1/send')

  const first = await send(4)
  const again = await send(4)
  assert.equal(first.isError, undefined, JSON.stringify(first.content))
  assert.equal(first.structuredContent?.replayed, false)
  assert.equal(again.structuredContent?.replayed, true)
  assert.deepEqual(again.structuredContent?.transaction, first.structuredContent?.transaction)
  assert.deepEqual(
    sendsSeen().map((request) => request.headers['idempotency-key']),
    [key, key],
  )
  // One transfer in the wallet: the sender's list holds the deposit and one send, the recipient got 4 once.
  const transferId = (first.structuredContent!.transaction as { id: string }).id
  const listed = await stack.wallet.user(ann.crmId).read('transactions', { currency: 'USD' })
  assert.deepEqual(
    listed.transactions.map((tx: { id: string; amount: number }) => [tx.id, tx.amount]),
    [
      [transferId, -4],
      [listed.transactions[1]?.id, 20],
    ],
  )
  assert.equal((await stack.wallet.user(bob.crmId).read('balance', { currency: 'USD' })).balance, 4)
  assert.equal(await stack.store.mcpGrants.spent({ kind: 'user', id: ann.crmId }, 'USD', utcDay(Date.now())), 400)

  const changed = await send(5)
  assert.equal(errorCode(changed), 2204)
  assert.equal(sendsSeen().length, 2, 'not sent on')
  assert.equal((await stack.wallet.user(bob.crmId).read('balance', { currency: 'USD' })).balance, 4)
  assert.equal(await stack.store.mcpGrants.spent({ kind: 'user', id: ann.crmId }, 'USD', utcDay(Date.now())), 400)

  await assert.rejects(
    client.callTool({ name: 'wallet_send', arguments: { to: String(bob.crmId), currency: 'USD', amount: 1 } }),
    (error: Error & { code?: number }) => error.code === -32602 && /idempotency_key/.test(error.message),
  )
})
