import assert from 'node:assert/strict'
import { createDatabase } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, listNullableColumns } from '@atrium/platform/testing'
import { startWallet } from '../../../test/support.ts'

forEachDialect('a withdrawal holds the amount until it completes, and then debits it', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 50)
  const started = await wallet.internal('withdraw', {
    crm_id: '1001',
    currency: 'USD',
    amount: 20,
    partner_name: 'Card 4242',
  })
  assert.equal(started.status, 200, JSON.stringify(started.error))
  const { transaction } = started.result
  assert.equal(transaction.tx_type, 3)
  assert.equal(transaction.state, 1, 'pending')
  assert.equal(transaction.amount, -20)
  assert.deepEqual(transaction.partner, { crm_id: '0', name: 'Card 4242' })
  assert.deepEqual(started.result.balance, { currency: 'USD', balance: 50, hold: 20, available: 30 })

  const tooMuch = await wallet.user(1001).post('send', { to: '1002', currency: 'USD', amount: 30.01 })
  assert.equal(tooMuch.error?.code, 4000, 'held funds cannot be sent')

  const done = await wallet.internal('transactions/state', { id: transaction.id, state: 2 })
  assert.equal(done.status, 200, JSON.stringify(done.error))
  assert.equal(done.result.transaction.state, 2)
  assert.deepEqual(await wallet.user(1001).read('balance', { currency: 'USD' }), {
    currency: 'USD',
    balance: 30,
    hold: 0,
    available: 30,
  })
  const again = await wallet.internal('transactions/state', { id: transaction.id, state: 3 })
  assert.equal(again.status, 409)
  assert.equal(again.error?.code, 4002, 'a completed transaction stays completed')
})

forEachDialect('a failed withdrawal releases the hold', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 50)
  const { result } = await wallet.internal('withdraw', { crm_id: '1001', currency: 'USD', amount: 20 })
  const failed = await wallet.internal('transactions/state', { id: result.transaction.id, state: 3 })
  assert.equal(failed.result.transaction.state, 3)
  assert.equal(failed.result.transaction.partner, undefined, 'no partner was named')
  assert.deepEqual(await wallet.user(1001).read('balance', { currency: 'USD' }), {
    currency: 'USD',
    balance: 50,
    hold: 0,
    available: 50,
  })
})

forEachDialect('internal operations validate their input', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  const missing = await wallet.internal('transactions/state', { id: '123456789', state: 2 })
  assert.equal(missing.status, 404)
  assert.equal(missing.error?.code, 4001)
  assert.equal((await wallet.internal('transactions/state', { id: '1', state: 1 })).error?.code, 1000)
  assert.equal((await wallet.internal('withdraw', { crm_id: '5', currency: 'USD', amount: 1 })).error?.code, 4000)
  assert.equal((await wallet.internal('deposit', { crm_id: '5', currency: 'USD', amount: 0.001 })).error?.code, 4003)
  assert.equal((await wallet.internal('deposit', { crm_id: '5', currency: 'USD' })).error?.code, 1000)
})

forEachDialect('the wallet database has no nullable column', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  await startWallet(t, dialect, {}, url)
  const database = createDatabase(url)
  t.after(() => database.destroy())
  assert.deepEqual(await listNullableColumns(database), [])
})

forEachDialect('a pending deposit credits nothing until it is settled as completed', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 5)
  const started = await wallet.internal('deposit', {
    crm_id: '1001',
    currency: 'USD',
    amount: 20,
    partner_name: 'Card payment',
    state: 1,
  })
  assert.equal(started.status, 200, JSON.stringify(started.error))
  assert.equal(started.result.transaction.state, 1)
  assert.equal(started.result.transaction.amount, 20)
  assert.deepEqual(started.result.balance, { currency: 'USD', balance: 5, hold: 0, available: 5 })
  const listed = (await wallet.user(1001).read('transactions')).transactions[0]
  assert.deepEqual(listed, started.result.transaction, 'the pending deposit shows in the wallet')

  await wallet.internal('transactions/state', { id: started.result.transaction.id, state: 2 })
  assert.equal((await wallet.user(1001).read('balance', { currency: 'USD' })).balance, 25)
  const refused = await wallet.internal('deposit', { crm_id: '1001', currency: 'USD', amount: 1, state: 3 })
  assert.equal(refused.error?.code, 1000, 'a deposit starts pending or completed, never failed')
})
