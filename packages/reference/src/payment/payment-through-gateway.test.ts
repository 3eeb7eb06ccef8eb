import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { SERVICE_SECRET as GATEWAY_SECRET, signedInUser, startGateway } from '../../../gateway/test/support.ts'
import { startPayment } from '../../test/payment.ts'
import { startWallet } from '../../test/support.ts'

forEachDialect(
  'a signed-in user starts an order through the gateway and sees its pending deposit in the wallet',
  async (t, dialect) => {
    const wallet = await startWallet(t, dialect, { ServiceSecret: GATEWAY_SECRET })
    const payment = await startPayment(t, dialect, {
      walletUrl: wallet.base,
      settings: { ServiceSecret: GATEWAY_SECRET },
    })
    // Routes as npm start has them; each upstream by URL, so the gateway polls neither module.
    const gateway = await startGateway(t, dialect, {
      settings: {
        Proxy: {
          Routes: [
            { Prefix: '/payment/', Upstream: payment.base, Flags: ['RequireSession'] },
            { Prefix: '/wallet/', Upstream: wallet.base, Flags: ['AppAuthAndCORS', 'RequireSession'] },
          ],
        },
      },
    })
    const user = await signedInUser(gateway)
    const call = (path: string, body?: object, headers: Record<string, string> = {}) =>
      fetch(`${gateway.url}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { ...user.headers, ...headers },
        body: body && JSON.stringify(body),
      })

    const key = { 'Idempotency-Key': 'gateway-order-1' }
    const response = await call('/payment/v1/payment_order_start', { flow: 'card', currency: 'EUR', amount: 50 }, key)
    const order = (await json(response)).result
    assert.equal(response.status, 200, JSON.stringify(order))
    assert.equal(order.fee, (Math.round((5000 * 290) / 10_000) + 30) / 100)

    const replay = await call('/payment/v1/payment_order_start', { flow: 'card', currency: 'EUR', amount: 50 }, key)
    assert.equal(replay.status, 200)
    assert.equal(replay.headers.get('idempotent-replayed'), 'true', 'the replay marker passes the proxy')
    assert.equal((await json(replay)).result.id, order.id)

    const listed = await call('/wallet/v1/transactions')
    const { transactions } = (await json(listed)).result
    assert.equal(transactions.length, 1)
    assert.equal(transactions[0].id, order.transaction_id)
    assert.equal(transactions[0].state, 1, 'pending')
    assert.equal(transactions[0].amount, 50)

    const anonymous = await fetch(`${gateway.url}/payment/v1/payment_order_start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ flow: 'card', currency: 'EUR', amount: 50 }),
    })
    assert.equal(anonymous.status, 401, 'the route needs a session')
    assert.equal((await payment.orders()).length, 1)
  },
)
