import assert from 'node:assert/strict'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { createDatabase } from '@atrium/platform'
import { forEachDialect, json, listNullableColumns } from '@atrium/platform/testing'
import { sql } from 'kysely'
import { startPayment, TEST_FLOWS } from '../../../test/payment.ts'
import { startWallet } from '../../../test/support.ts'

forEachDialect('an order applies the tariff and the wallet shows its pending deposit', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  const payment = await startPayment(t, dialect, { walletUrl: wallet.base, settings: { OrderTtlMinutes: 30 } })
  await wallet.deposit(1001, 'USD', 5)
  const before = Date.now()

  const started = await payment.start(1001, { flow: 'card', currency: 'USD', amount: 123.45 }, { 'X-AppId': '42' })
  assert.equal(started.status, 200, JSON.stringify(started.error))
  const order = started.result
  // In cents: 2.9 % of 12345 rounded to a cent, plus the fixed 30.
  const { FeeBasisPoints, FixedFee } = TEST_FLOWS.card
  const feeCents = Math.round((12_345 * FeeBasisPoints) / 10_000) + Math.round(FixedFee * 100)
  assert.equal(order.amount, 123.45)
  assert.equal(order.fee, feeCents / 100)
  assert.equal(order.total, (12_345 + feeCents) / 100)
  assert.equal(order.flow, 'card')
  assert.equal(order.currency, 'USD')
  assert.equal(order.state, 'pending')
  assert.match(order.id, /^[1-9][0-9]+$/)
  assert.equal(order.address, `https://pay.test/card/${order.id}`)
  const created = Date.parse(order.created)
  assert.ok(created >= before - 1000 && created <= Date.now() + 1000)
  assert.equal(Date.parse(order.expires) - created, 30 * 60_000)

  const listed = (await wallet.user(1001).read('transactions')).transactions
  const deposit = listed.find((tx: { id: string }) => tx.id === order.transaction_id)
  assert.ok(deposit, 'the order’s transaction is in the user’s wallet')
  assert.deepEqual(
    { tx_type: deposit.tx_type, state: deposit.state, amount: deposit.amount, currency: deposit.currency },
    { tx_type: 1, state: 1, amount: 123.45, currency: 'USD' },
  )
  assert.deepEqual(deposit.partner, { crm_id: '0', name: 'Card payment' })
  assert.match(deposit.comment, new RegExp(order.id))
  assert.equal((await wallet.user(1001).read('balance', { currency: 'USD' })).balance, 5, 'nothing credited yet')
  const appEvents = (await wallet.events({ subjects: 'app:42' })).result.Events
  assert.equal(appEvents.length, 1, 'the app the order came through sees the deposit')

  const [row] = await payment.orders()
  assert.deepEqual(
    { id: String(row!.timetick), crm: row!.crm_id, app: row!.app_id, tx: String(row!.wallet_tx_id) },
    { id: order.id, crm: 1001, app: 42, tx: order.transaction_id },
  )

  const free = await payment.start(1001, { flow: 'service', currency: 'USD', amount: 0.01 })
  assert.equal(free.status, 200, JSON.stringify(free.error))
  assert.deepEqual([free.result.fee, free.result.total], [0, 0.01], 'a flow without fees')
  assert.equal(free.result.address, `service:${free.result.id}`)
})

forEachDialect('bad orders are refused with their codes and leave nothing behind', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  const payment = await startPayment(t, dialect, { walletUrl: wallet.base })
  const order = { flow: 'card', currency: 'USD', amount: 10 }
  const cases: [object, Record<string, string>, number, number][] = [
    [{ ...order, flow: 'paypal' }, {}, 400, 4100],
    [{ ...order, flow: 'constructor' }, {}, 400, 4100],
    [{ ...order, flow: 'toString' }, {}, 400, 4100],
    [{ ...order, currency: 'GBP' }, {}, 400, 4101],
    [{ ...order, flow: 'service', currency: 'EUR' }, {}, 400, 4101],
    [{ ...order, amount: 0.99 }, {}, 400, 4102],
    [{ ...order, amount: 5000.01 }, {}, 400, 4102],
    [{ ...order, amount: 1.001 }, {}, 400, 4003],
    [{ ...order, amount: -1 }, {}, 400, 4003],
    [{ ...order, amount: '10' }, {}, 400, 1000],
    [{ ...order, currency: 'usd' }, {}, 400, 1000],
    [{ ...order, flow: '' }, {}, 400, 1000],
    [{ ...order, flow: 'card\u0000' }, {}, 400, 4100],
    [{ ...order, tip: 1 }, {}, 400, 1000],
    [{ flow: 'card', currency: 'USD' }, {}, 400, 1000],
    [order, { 'Idempotency-Key': 'no spaces' }, 400, 4011],
  ]
  for (const [body, headers, status, code] of cases) {
    const refused = await payment.start(1001, body, headers)
    assert.equal(refused.status, status, JSON.stringify(body))
    assert.equal(refused.error?.code, code, JSON.stringify(body))
    assert.equal(typeof refused.error?.message, 'string')
  }
  const anonymous = await payment.start(0, order)
  assert.equal(anonymous.status, 401)
  assert.equal(anonymous.error?.code, 1008)

  const unsigned = await fetch(`${payment.base}/payment/v1/payment_order_start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Crm': '1001' },
    body: JSON.stringify(order),
  })
  assert.equal(unsigned.status, 401, 'only the gateway’s signed hop reaches the module')
  assert.equal((await json(unsigned)).error.code, 1008)
  const oversized = await payment.start(1001, { ...order, flow: 'x'.repeat(2_000_000) })
  assert.equal(oversized.status, 413)

  assert.deepEqual(await payment.orders(), [])
  assert.deepEqual((await wallet.user(1001).read('transactions')).transactions, [])
})

forEachDialect('with the wallet down no order is kept, and the key stays free', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  // A listener that never answers stands for a hung wallet; a closed port for a stopped one.
  const sockets = new Set<Socket>()
  const hung = createServer((socket) => sockets.add(socket))
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const socket of sockets) socket.destroy()
    return new Promise((resolve) => hung.close(resolve))
  })
  const stopped = createServer()
  await new Promise<void>((resolve) => stopped.listen(0, '127.0.0.1', resolve))
  const stoppedPort = (stopped.address() as AddressInfo).port
  await new Promise((resolve) => stopped.close(resolve))

  const hanging = await startPayment(t, dialect, {
    walletUrl: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`,
    settings: { WalletTimeoutMs: 300 },
  })
  const order = { flow: 'card', currency: 'EUR', amount: 20 }
  const key = { 'Idempotency-Key': 'wallet-down-1' }
  const timedOut = await hanging.start(1001, order, key)
  assert.equal(timedOut.status, 502)
  assert.equal(timedOut.error?.code, 4103)

  const unreachable = await startPayment(t, dialect, { walletUrl: `http://127.0.0.1:${stoppedPort}`, url: hanging.url })
  const refused = await unreachable.start(1001, order, key)
  assert.equal(refused.status, 502)
  assert.equal(refused.error?.code, 4103)

  assert.deepEqual(await hanging.orders(), [], 'no order without its wallet transaction')
  assert.deepEqual(await hanging.keys(), [], 'the key was not consumed')

  const up = await startPayment(t, dialect, { walletUrl: wallet.base, url: hanging.url })
  const started = await up.start(1001, order, key)
  assert.equal(started.status, 200, JSON.stringify(started.error))
  assert.equal(started.headers.get('idempotent-replayed'), null, 'started now, not replayed')
  assert.equal((await up.orders()).length, 1)
})

forEachDialect('the payment database has no nullable column', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  const payment = await startPayment(t, dialect, { walletUrl: wallet.base })
  const database = createDatabase(payment.url)
  t.after(() => database.destroy())
  assert.deepEqual(await listNullableColumns(database), [])
})

forEachDialect(
  'an order that cannot be stored after the wallet answered fails its deposit again',
  async (t, dialect) => {
    const wallet = await startWallet(t, dialect)
    const payment = await startPayment(t, dialect, { walletUrl: wallet.base })
    // The order table gone: the wallet records the deposit, then storing the order fails.
    const database = createDatabase(payment.url)
    t.after(() => database.destroy())
    await sql`alter table payment_orders rename to payment_orders_moved`.execute(database.db)

    const failed = await payment.start(1001, { flow: 'card', currency: 'USD', amount: 10 }, { 'Idempotency-Key': 'k' })
    assert.equal(failed.status, 500)
    assert.equal(failed.error?.code, 1099)
    const [deposit] = (await wallet.user(1001).read('transactions')).transactions
    assert.equal(deposit.tx_type, 1)
    assert.equal(deposit.state, 3, 'the orphaned pending deposit was failed')
    assert.equal((await wallet.user(1001).read('balance', { currency: 'USD' })).balance, 0)
    assert.deepEqual(await payment.keys(), [], 'the key was rolled back with the order')
  },
)
