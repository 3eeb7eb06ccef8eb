import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { startWallet } from '../../../test/support.ts'

const lunch = { to: '1002', currency: 'USD', amount: 12.5, comment: 'lunch' }

forEachDialect(
  'a repeated Idempotency-Key answers the first transfer again without paying twice',
  async (t, dialect) => {
    const wallet = await startWallet(t, dialect, { TransferFeeBasisPoints: 100 })
    await wallet.deposit(1001, 'USD', 100)
    const alice = wallet.user(1001)
    const key = { 'Idempotency-Key': 'order-7:lunch_2026.11' }

    const first = await alice.post('send', lunch, key)
    assert.equal(first.status, 200, JSON.stringify(first.error))
    assert.equal(first.headers.get('idempotent-replayed'), null, 'the first request is not a replay')
    // In cents: 1 % of 1250, rounded to a cent; the sender pays it on top.
    const feeCents = Math.round((1250 * 100) / 10_000)
    const left = (10_000 - 1250 - feeCents) / 100
    assert.equal(first.result.transaction.fee, feeCents / 100)
    assert.equal(first.result.balance.balance, left)

    // The amount written another way is the same request.
    const again = await alice.post('send', { ...lunch, amount: 12.5 }, key)
    assert.equal(again.status, 200)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.deepEqual(again.result, first.result, 'the stored answer, with the same transaction id')

    assert.equal((await alice.read('balance', { currency: 'USD' })).balance, left, 'paid once')
    assert.equal((await wallet.user(1002).read('balance', { currency: 'USD' })).balance, 12.5)
    const sent = (await alice.read('transactions')).transactions.filter((tx: { tx_type: number }) => tx.tx_type === 2)
    assert.equal(sent.length, 1)

    // The key belongs to its sender: Bob's own key of the same name is a new transfer.
    await wallet.deposit(1003, 'USD', 20)
    const carol = await wallet.user(1003).post('send', lunch, key)
    assert.equal(carol.status, 200)
    assert.equal(carol.headers.get('idempotent-replayed'), null)
    assert.notEqual(carol.result.transaction.id, first.result.transaction.id)
  },
)

forEachDialect('a key used again for a different request is refused with 422', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 100)
  const alice = wallet.user(1001)
  const key = { 'Idempotency-Key': 'k1' }
  assert.equal((await alice.post('send', lunch, key)).status, 200)
  for (const changed of [
    { ...lunch, amount: 12.51 },
    { ...lunch, to: '1003' },
    { ...lunch, currency: 'EUR' },
    { ...lunch, comment: 'dinner' },
    { to: lunch.to, currency: lunch.currency, amount: lunch.amount },
  ]) {
    const refused = await alice.post('send', changed, key)
    assert.equal(refused.status, 422, JSON.stringify(changed))
    assert.equal(refused.error?.code, 4010, JSON.stringify(changed))
  }
  assert.equal((await alice.read('balance', { currency: 'USD' })).balance, 87.5, 'only the first moved funds')
})

forEachDialect('parallel requests with one key make exactly one transfer', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 1000)
  const alice = wallet.user(1001)
  const key = { 'Idempotency-Key': 'parallel-1' }
  const answers = await Promise.all(Array.from({ length: 12 }, () => alice.post('send', lunch, key)))

  for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.error))
  const ids = new Set(answers.map((answer) => answer.result.transaction.id))
  assert.equal(ids.size, 1, 'every answer names the same transaction')
  const fresh = answers.filter((answer) => answer.headers.get('idempotent-replayed') === null)
  assert.equal(fresh.length, 1, 'one request performed it, the others replayed it')
  assert.equal((await alice.read('balance', { currency: 'USD' })).balance, 1000 - 12.5)
  assert.equal((await wallet.user(1002).read('transactions')).transactions.length, 1)
})

forEachDialect('a refused transfer does not consume its key', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 10)
  const alice = wallet.user(1001)
  const key = { 'Idempotency-Key': 'retry-after-top-up' }
  const refused = await alice.post('send', lunch, key)
  assert.equal(refused.status, 409)
  assert.equal(refused.error?.code, 4000)

  await wallet.deposit(1001, 'USD', 10)
  const paid = await alice.post('send', lunch, key)
  assert.equal(paid.status, 200, JSON.stringify(paid.error))
  assert.equal(paid.headers.get('idempotent-replayed'), null, 'performed now, not replayed')
  assert.equal(paid.result.balance.balance, 7.5)
})

forEachDialect('a malformed Idempotency-Key is refused with 400 and moves nothing', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 100)
  const alice = wallet.user(1001)
  for (const bad of ['', 'x'.repeat(65), 'has space', 'slash/key', 'a%41', 'semi;colon', 'a,b']) {
    const refused = await alice.post('send', lunch, { 'Idempotency-Key': bad })
    assert.equal(refused.status, 400, JSON.stringify(bad))
    assert.equal(refused.error?.code, 4011, JSON.stringify(bad))
  }
  assert.equal((await alice.post('send', lunch, { 'Idempotency-Key': 'x'.repeat(64) })).status, 200, '64 is fine')
  assert.equal((await alice.read('balance', { currency: 'USD' })).balance, 87.5)
})

forEachDialect('a key is honoured for IdempotencyKeyHours and is new again after them', async (t, dialect) => {
  let time = Date.UTC(2026, 10, 26, 12)
  const wallet = await startWallet(t, dialect, { IdempotencyKeyHours: 24 }, undefined, () => time)
  await wallet.deposit(1001, 'USD', 100)
  const alice = wallet.user(1001)
  const key = { 'Idempotency-Key': 'daily' }
  const first = await alice.post('send', lunch, key)
  assert.equal(first.status, 200)

  time += 24 * 3_600_000
  const within = await alice.post('send', lunch, key)
  assert.equal(within.headers.get('idempotent-replayed'), 'true', 'still honoured at exactly 24 h')
  assert.equal(within.result.transaction.id, first.result.transaction.id)

  time += 1
  const after = await alice.post('send', lunch, key)
  assert.equal(after.status, 200)
  assert.equal(after.headers.get('idempotent-replayed'), null, 'forgotten after 24 h: a new transfer')
  assert.notEqual(after.result.transaction.id, first.result.transaction.id)
  assert.equal((await alice.read('balance', { currency: 'USD' })).balance, 75)
  assert.equal((await wallet.monitoringStats()).database.idempotency_keys, 1, 'the old key was pruned')
})
