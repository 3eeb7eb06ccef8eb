import { ApiError, markReplayed, readIdempotencyKey, readIdentity, type Service } from '@atrium/platform'
import type { PaymentConfig } from '../../config.ts'
import { OrderStartBody, OrderView, toOrderView } from './orders.schema.ts'
import { type OrderStarter, startOrder } from './start-order.ts'
import { quote } from './tariff.ts'

export interface OrdersPluginOptions {
  starter: OrderStarter
  flows: PaymentConfig['Flows']
}

const paymentOrderStart = {
  summary: 'Start a payment order: apply the flow’s tariff and record the pending wallet transaction',
  description:
    'An `Idempotency-Key` header (1–64 of `A-Za-z0-9_.:-`) makes a repeat answer the first order ' +
    '(with `Idempotent-Replayed: true`) instead of starting another.',
  body: OrderStartBody,
  response: { 200: OrderView },
}

/**
 * POST /payment/v1/payment_order_start (spec: "Other module endpoints named"): the one switching
 * point of the built-in and service payment flows, for the signed-in user.
 */
export default async function ordersPlugin(app: Service, { starter, flows }: OrdersPluginOptions) {
  app.post('/payment_order_start', { schema: paymentOrderStart }, async (request, reply) => {
    const { crmId, appId } = readIdentity(request)
    if (crmId === 0) throw new ApiError('Unauthenticated', 'a payment order needs a signed-in user (X-Crm)')
    const key = readIdempotencyKey(request)
    const { flow, currency, amount } = request.body
    const { order, replayed } = await startOrder(
      starter,
      { crmId, appId, flowName: flow, currency, quote: quote(flows, flow, currency, amount), key },
      request.log,
    )
    if (replayed) markReplayed(reply)
    return toOrderView(order)
  })
}
