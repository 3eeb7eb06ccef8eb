import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import type { EventBatch } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, onlyWithPostgres, until } from '@atrium/platform/testing'
import { startWallet, type WalletClient } from '../../../test/support.ts'

async function readAll(wallet: WalletClient, query: Record<string, string | number> = {}) {
  const { status, result, error } = await wallet.events({ limit: 1000, ...query })
  assert.equal(status, 200, JSON.stringify(error))
  return result as EventBatch
}

/**
 * Resolves once a long-poll is parked: after a read found nothing, the events handler waits for a
 * commit with a time limit made by AbortSignal.timeout. Tests thereby act on a waiting long-poll
 * without guessing how long it takes to park.
 */
function watchLongPolls(t: TestContext) {
  const timeouts = t.mock.method(AbortSignal, 'timeout')
  return () => until(() => timeouts.mock.callCount() > 0, 'a long-poll to park')
}

forEachDialect('a transfer emits TxInWallet and BalanceChanged to both parties, typed', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 100)
  const { LastTick: since } = await readAll(wallet)
  const sent = await wallet.user(1001).send(1002, 'USD', 12.5, 'rent')

  const forAlice = await readAll(wallet, { since, subjects: 'user:1001' })
  assert.deepEqual(
    forAlice.Events.map((item) => [item.EventType, item.CrmId, item.AppId]),
    [
      ['TxInWallet', 1001, 0],
      ['BalanceChanged', 1001, 0],
    ],
  )
  const [tx, balance] = forAlice.Events
  assert.equal(typeof tx!.Timetick, 'number')
  assert.ok(tx!.TickUpdate > since)
  assert.deepEqual(tx!.Data, { ...sent.transaction, tick: String(tx!.TickUpdate) })
  assert.deepEqual(balance!.Data, {
    currency: 'USD',
    balance: 87.5,
    hold: 0,
    available: 87.5,
    tx_id: sent.transaction.id,
    tick: String(balance!.TickUpdate),
  })

  const forBob = await readAll(wallet, { since, subjects: 'user:1002' })
  const [bobTx, bobBalance] = forBob.Events
  assert.equal(bobTx!.EventType, 'TxInWallet')
  assert.deepEqual(
    { id: bobTx!.Data.id, amount: bobTx!.Data.amount, fee: bobTx!.Data.fee, partner: bobTx!.Data.partner },
    { id: sent.transaction.id, amount: 12.5, fee: 0, partner: { crm_id: '1001', name: '' } },
  )
  assert.match(String(bobTx!.Data.datetime), /Z$/)
  assert.equal(bobBalance!.EventType, 'BalanceChanged')
  assert.equal(bobBalance!.Data.balance, 12.5)

  const forCarol = await readAll(wallet, { since, subjects: 'user:1003' })
  assert.deepEqual(forCarol.Events, [])
  assert.equal(forCarol.LastTick, forBob.LastTick, 'the cursor moves past events for others')
  const ticks = [...forAlice.Events, ...forBob.Events].map((item) => item.TickUpdate)
  assert.equal(new Set(ticks).size, 4, 'each event has its own cursor value')
})

forEachDialect('a settled withdrawal emits TxStateChanged with the new state', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 10)
  const { result } = await wallet.internal('withdraw', { crm_id: '1001', currency: 'USD', amount: 4 })
  const { LastTick: since } = await readAll(wallet)
  await wallet.internal('transactions/state', { id: result.transaction.id, state: 2 })
  const { Events } = await readAll(wallet, { since, subjects: 'user:1001' })
  assert.deepEqual(
    Events.map((item) => [item.EventType, item.Data.state ?? item.Data.balance]),
    [
      ['TxStateChanged', 2],
      ['BalanceChanged', 6],
    ],
  )
  assert.equal(Events[0]!.Data.id, result.transaction.id)
})

forEachDialect('an app subject receives the events of transactions made through it', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 100, { 'X-AppId': '7' })
  await wallet.user(1001, 7).send(1002, 'USD', 1)
  await wallet.user(1001).send(1002, 'USD', 2)
  const { Events } = await readAll(wallet, { subjects: 'app:7' })
  assert.deepEqual(
    Events.map((item) => [item.EventType, item.CrmId, item.AppId, item.Data.amount ?? item.Data.balance]),
    [
      ['TxInWallet', 0, 7, 100],
      ['BalanceChanged', 0, 7, 100],
      ['TxInWallet', 0, 7, -1],
      ['BalanceChanged', 0, 7, 99],
    ],
    'the app acted for the depositee and the sender, not for the recipient or the later transfer',
  )
  assert.deepEqual(await readAll(wallet, { apps: '7' }), await readAll(wallet, { subjects: 'app:7' }))
  assert.deepEqual((await readAll(wallet, { subjects: 'app:8' })).Events, [])
  const both = await readAll(wallet, { subjects: 'user:1001,app:7' })
  assert.equal(both.Events.filter((item) => item.AppId === 7).length, 4)
  assert.equal(both.Events.filter((item) => item.CrmId === 1001).length, 6)
})

forEachDialect('the legacy users alias selects the same events as user: subjects', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 5)
  await wallet.user(1001).send(1002, 'USD', 1)
  const byAlias = await readAll(wallet, { users: '1001,1002' })
  assert.deepEqual(byAlias, await readAll(wallet, { subjects: 'user:1001,user:1002' }))
  assert.deepEqual(new Set(byAlias.Events.map((item) => item.CrmId)), new Set([1001, 1002]))
  assert.deepEqual((await readAll(wallet, { subjects: 'code:1001' })).Events, [], 'guests have no wallet')
})

forEachDialect('since and limit page through the feed without gaps or repeats', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  for (let i = 1; i <= 12; i++) await wallet.deposit(1001, 'USD', i)
  const seen: number[] = []
  let since = 0
  for (let round = 0; round < 20; round++) {
    const batch = await readAll(wallet, { subjects: 'user:1001', since, limit: 5 })
    seen.push(...batch.Events.filter((item) => item.EventType === 'TxInWallet').map((item) => Number(item.Data.amount)))
    if (batch.LastTick === since) break
    since = batch.LastTick
  }
  assert.deepEqual(
    seen,
    Array.from({ length: 12 }, (_, i) => i + 1),
  )
})

forEachDialect('empty subjects answer no events with the head as LastTick', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  assert.deepEqual(await readAll(wallet, { subjects: '' }), { Events: [], LastTick: 0 })
  await wallet.deposit(1001, 'USD', 5)
  const everything = await readAll(wallet)
  const probe = await readAll(wallet, { subjects: '' })
  assert.deepEqual(probe.Events, [])
  assert.equal(probe.LastTick, everything.LastTick)
  assert.equal(everything.LastTick, everything.Events.at(-1)!.TickUpdate)
})

forEachDialect('limit and wait have documented bounds and subjects are validated', async (t, dialect) => {
  const wallet = await startWallet(t, dialect, { Events: { MaxWaitMs: 5000 } })
  assert.equal((await wallet.events({ limit: 1001 })).error?.code, 1000)
  assert.equal((await wallet.events({ limit: 0 })).status, 400)
  assert.equal((await wallet.events({ wait: 5001 })).error?.code, 1000)
  assert.equal((await wallet.events({ cursor: 1 })).error?.code, 1000)
  for (const subjects of ['user:x', 'team:1', 'user:', 'user:-1', 'user:1;drop', 'user:0']) {
    const response = await wallet.events({ subjects })
    assert.equal(response.status, 400, subjects)
    assert.equal(response.error?.code, 1000)
  }
  assert.equal((await wallet.events({ users: 'abc' })).error?.code, 1000)
})

forEachDialect('wait long-polls until an event is committed', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  const { LastTick } = await readAll(wallet)
  const parked = watchLongPolls(t)
  const polling = wallet.events({ subjects: 'user:1002', since: LastTick, wait: 5000 })
  await parked()
  const sent = Date.now()
  await wallet.deposit(1001, 'USD', 3, {})
  await wallet.user(1001).send(1002, 'USD', 1)
  const { result } = await polling
  assert.equal(result.Events[0].EventType, 'TxInWallet')
  assert.equal(result.Events[0].Data.amount, 1)
  assert.ok(Date.now() - sent < 2000, 'answered on commit, not at the end of the wait')
  const idle = Date.now()
  const empty = await wallet.events({ subjects: 'user:1002', since: result.LastTick, wait: 300 })
  assert.deepEqual(empty.result.Events, [])
  assert.ok(Date.now() - idle >= 280, 'an idle long-poll waits its time')
})

// The cursor must never skip an event that commits late: writers on two instances against one
// PostgreSQL database commit concurrently while a reader follows the cursor on the other one.
test(
  'a cursor reader misses nothing while writers on two instances commit concurrently (postgres)',
  onlyWithPostgres(),
  async (t) => {
    const url = await createTestDatabaseUrl(t, 'postgres')
    const first = await startWallet(t, 'postgres', { NodeNumber: 1 }, url)
    const second = await startWallet(t, 'postgres', { NodeNumber: 2 }, url)
    const { LastTick: start } = await readAll(first, { subjects: 'user:2' })
    await first.deposit(1, 'USD', 1000)

    const sent = new Set<string>()
    let writing = true
    const writers = [first, second, first, second].map(async (instance) => {
      for (let i = 0; i < 30; i++) sent.add((await instance.user(1).send(2, 'USD', 1)).transaction.id)
    })
    const received: string[] = []
    const reader = (async () => {
      let since = start
      for (;;) {
        const batch = await readAll(second, { subjects: 'user:2', since, limit: 7, wait: 200 })
        for (const item of batch.Events) if (item.EventType === 'TxInWallet') received.push(String(item.Data.id))
        since = batch.LastTick
        if (!writing && batch.Events.length === 0) break
      }
    })()
    await Promise.all(writers)
    writing = false
    await reader
    assert.equal(sent.size, 120)
    assert.equal(received.length, new Set(received).size, 'no event twice')
    assert.deepEqual(new Set(received), sent, 'every event once')
    assert.equal((await first.user(2).read('balance', { currency: 'USD' })).balance, 120)
  },
)
