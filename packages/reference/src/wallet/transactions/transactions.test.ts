import assert from 'node:assert/strict'
import { signedHeaders } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startWallet } from '../../../test/support.ts'

forEachDialect('a transfer moves funds between two users, each seeing it from their side', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 100)
  const sent = await wallet.user(1001).send(1002, 'USD', 30.25, 'lunch')

  assert.deepEqual(sent.balance, { currency: 'USD', balance: 69.75, hold: 0, available: 69.75 })
  assert.deepEqual(
    { ...sent.transaction, id: undefined, datetime: undefined },
    {
      id: undefined,
      currency: 'USD',
      tx_type: 2,
      state: 2,
      amount: -30.25,
      fee: 0,
      datetime: undefined,
      partner: { crm_id: '1002', name: '' },
      comment: 'lunch',
    },
  )
  assert.match(sent.transaction.id, /^[1-9][0-9]+$/)
  assert.match(sent.transaction.datetime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  assert.ok(Math.abs(Date.parse(sent.transaction.datetime) - Date.now()) < 60_000)

  assert.deepEqual(await wallet.user(1002).read('balance', { currency: 'USD' }), {
    currency: 'USD',
    balance: 30.25,
    hold: 0,
    available: 30.25,
  })
  const received = (await wallet.user(1002).read('transactions')).transactions
  assert.equal(received.length, 1)
  assert.equal(received[0].id, sent.transaction.id)
  assert.equal(received[0].amount, 30.25)
  assert.deepEqual(received[0].partner, { crm_id: '1001', name: '' })
  assert.deepEqual(await wallet.user(1003).read('balances'), { balances: [] }, 'a third user has no wallet')
  assert.deepEqual(await wallet.user(1003).read('balance', { currency: 'USD' }), {
    currency: 'USD',
    balance: 0,
    hold: 0,
    available: 0,
  })
})

forEachDialect(
  'the sender pays the transfer fee; a transfer the balance cannot cover changes nothing',
  async (t, dialect) => {
    const wallet = await startWallet(t, dialect, { TransferFeeBasisPoints: 150 })
    await wallet.deposit(1001, 'EUR', 10)
    const sent = await wallet.user(1001).send(1002, 'EUR', 4)
    assert.equal(sent.transaction.fee, 0.06, '1.5 % of 4')
    assert.equal(sent.balance.balance, 5.94)
    const received = (await wallet.user(1002).read('transactions')).transactions[0]
    assert.equal(received.fee, 0, 'the recipient pays nothing')
    assert.equal(received.amount, 4)

    const { LastTick } = (await wallet.events()).result
    const refused = await wallet.user(1001).post('send', { to: '1002', currency: 'EUR', amount: 5.9 })
    assert.equal(refused.status, 409)
    assert.equal(refused.error?.code, 4000, '5.90 + 0.09 fee is more than 5.94')
    assert.equal((await wallet.user(1001).read('balance', { currency: 'EUR' })).balance, 5.94)
    assert.equal((await wallet.user(1001).read('transactions')).transactions.length, 2, 'no transaction recorded')
    assert.deepEqual((await wallet.events({ since: LastTick })).result.Events, [], 'no event recorded')
  },
)

forEachDialect('bad transfers are refused with their envelope codes', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 100)
  const alice = wallet.user(1001)
  const cases: [object, number, number][] = [
    [{ to: '1002', currency: 'USD', amount: 0 }, 400, 4003],
    [{ to: '1002', currency: 'USD', amount: -5 }, 400, 4003],
    [{ to: '1002', currency: 'USD', amount: 1.234 }, 400, 4003],
    [{ to: '1002', currency: 'USD', amount: 1e14 }, 400, 4003],
    [{ to: '1001', currency: 'USD', amount: 1 }, 400, 4004],
    [{ to: '1002', currency: 'usd', amount: 1 }, 400, 1000],
    [{ to: '0', currency: 'USD', amount: 1 }, 400, 1000],
    [{ to: 1002, currency: 'USD', amount: 1 }, 400, 1000],
    [{ to: '1002', currency: 'USD', amount: '1' }, 400, 1000],
    [{ to: '1002', currency: 'USD', amount: 1, memo: 'x' }, 400, 1000],
    [{ to: '1002', currency: 'GBP', amount: 1 }, 409, 4000],
  ]
  for (const [body, status, code] of cases) {
    const response = await alice.post('send', body)
    assert.equal(response.status, status, JSON.stringify(body))
    assert.equal(response.error?.code, code, JSON.stringify(body))
    assert.equal(typeof response.error?.message, 'string')
  }
  assert.equal((await alice.read('balance', { currency: 'USD' })).balance, 100, 'nothing moved')
  assert.ok((await alice.post('send', { to: '1002', currency: 'USD', amount: 0.1 })).status === 200, '0.10 is fine')
})

forEachDialect('wallet operations need a signed-in user and the inter-service credential', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  const anonymous = await wallet.call('GET', '/wallet/v1/balances', {})
  assert.equal(anonymous.status, 401)
  assert.equal(anonymous.error?.code, 1008)

  const unsigned = await fetch(`${wallet.base}/wallet/v1/balances`, { headers: { 'X-Crm': '1001' } })
  assert.equal(unsigned.status, 401)
  assert.equal((await json(unsigned)).error.code, 1008)

  // A signature made with another secret is not the gateway's.
  const headers = signedHeaders('wrong-secret'.padEnd(40, '-'), 'GET', '/private/v1/events', {})
  const forged = await fetch(`${wallet.base}/private/v1/events`, { headers })
  assert.equal(forged.status, 401)
  const health = await fetch(`${wallet.base}/private/v1/health`)
  assert.equal(health.status, 200, 'health needs no credential')
})

forEachDialect('transactions page newest first through next, filtered by currency', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  for (const amount of [1, 2, 3, 4, 5]) await wallet.deposit(1001, 'USD', amount)
  await wallet.deposit(1001, 'EUR', 9)
  const alice = wallet.user(1001)
  const amounts: number[] = []
  let before: string | undefined
  for (let page = 0; page < 5; page++) {
    const result = await alice.read('transactions', { currency: 'USD', limit: 2, before })
    amounts.push(...result.transactions.map((transaction: { amount: number }) => transaction.amount))
    if (result.next === '') break
    before = result.next
  }
  assert.deepEqual(amounts, [5, 4, 3, 2, 1])
  const all = await alice.read('transactions')
  assert.deepEqual(
    all.transactions.map((transaction: { currency: string }) => transaction.currency),
    ['EUR', 'USD', 'USD', 'USD', 'USD', 'USD'],
  )
  assert.equal(all.next, '')
  assert.equal((await alice.get('transactions', { limit: 101 })).error?.code, 1000)
  assert.equal((await alice.get('transactions', { before: 'x' })).error?.code, 1000)
})
