import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { startPayment } from '../../../test/payment.ts'
import { startWallet } from '../../../test/support.ts'

const order = { flow: 'card', currency: 'USD', amount: 40 }

forEachDialect(
  'a repeated Idempotency-Key answers the first order; another request under it is 422',
  async (t, dialect) => {
    const wallet = await startWallet(t, dialect)
    const payment = await startPayment(t, dialect, { walletUrl: wallet.base })
    const key = { 'Idempotency-Key': 'top-up:2026-11-26' }
    const first = await payment.start(1001, order, key)
    assert.equal(first.status, 200, JSON.stringify(first.error))
    const again = await payment.start(1001, { ...order, amount: 40.0 }, key)
    assert.equal(again.status, 200)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.deepEqual(again.result, first.result)

    const other = await payment.start(1001, { ...order, amount: 41 }, key)
    assert.equal(other.status, 422)
    assert.equal(other.error?.code, 4010)
    assert.equal((await payment.start(1001, { ...order, currency: 'EUR' }, key)).error?.code, 4010)

    const bobs = await payment.start(1002, order, key)
    assert.equal(bobs.status, 200, 'keys belong to their user')
    assert.notEqual(bobs.result.id, first.result.id)
    assert.equal((await payment.orders()).length, 2)
    assert.equal((await wallet.user(1001).read('transactions')).transactions.length, 1, 'one pending deposit')
  },
)

forEachDialect('parallel orders with one key start one order and one wallet transaction', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  const payment = await startPayment(t, dialect, { walletUrl: wallet.base })
  const key = { 'Idempotency-Key': 'parallel-order' }
  const answers = await Promise.all(Array.from({ length: 8 }, () => payment.start(1001, order, key)))
  for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.error))
  assert.equal(new Set(answers.map((answer) => answer.result.id)).size, 1)
  assert.equal(answers.filter((answer) => answer.headers.get('idempotent-replayed') === null).length, 1)
  assert.equal((await payment.orders()).length, 1)
  const deposits = (await wallet.user(1001).read('transactions')).transactions
  assert.deepEqual(
    deposits.map((tx: { id: string }) => tx.id),
    [answers[0]!.result.transaction_id],
    'the wallet recorded one deposit, with no failed leftovers',
  )
})

forEachDialect('an order key is honoured for IdempotencyKeyHours, then starts a new order', async (t, dialect) => {
  let time = Date.UTC(2026, 10, 26, 12)
  const wallet = await startWallet(t, dialect)
  const payment = await startPayment(t, dialect, { walletUrl: wallet.base, now: () => time })
  const key = { 'Idempotency-Key': 'monthly' }
  const first = await payment.start(1001, order, key)
  assert.equal(first.result.created, new Date(time).toISOString(), 'dated by the module clock')

  time += 24 * 3_600_000
  assert.equal((await payment.start(1001, order, key)).result.id, first.result.id)
  time += 1
  const later = await payment.start(1001, order, key)
  assert.equal(later.headers.get('idempotent-replayed'), null)
  assert.notEqual(later.result.id, first.result.id)
  assert.equal((await payment.keys()).length, 1, 'the old key was pruned')
})
