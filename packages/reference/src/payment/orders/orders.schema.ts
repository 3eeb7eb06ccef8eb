import { type Static, Type } from 'typebox'
import { Amount, Currency, fromMinorUnits } from '../../money.ts'
import type { OrderRow } from './orders.repository.ts'

/** The body of POST /payment/v1/payment_order_start. */
export const OrderStartBody = Type.Object(
  {
    flow: Type.String({ minLength: 1, maxLength: 64, description: 'A flow name from the Flows setting, e.g. card.' }),
    currency: Currency,
    amount: Amount,
  },
  { additionalProperties: false },
)
export type OrderStartBody = Static<typeof OrderStartBody>

/** A payment order as the API shows it (docs/payment.md). */
export const OrderView = Type.Object({
  id: Type.String({ description: 'Order id (a timetick as a decimal string).' }),
  flow: Type.String(),
  currency: Type.String(),
  amount: Type.Number({ description: 'What the wallet is credited when the payment arrives.' }),
  fee: Type.Number({ description: 'The flow’s fee: basis points of the amount plus the fixed fee.' }),
  total: Type.Number({ description: 'amount + fee: what the payer pays.' }),
  state: Type.Literal('pending'),
  address: Type.String({ description: 'Where the payer pays: the flow’s Address with the order id.' }),
  transaction_id: Type.String({ description: 'The pending deposit in the user’s wallet.' }),
  created: Type.String({ description: 'ISO 8601 UTC.' }),
  expires: Type.String({ description: 'ISO 8601 UTC: created + OrderTtlMinutes.' }),
})
export type OrderView = Static<typeof OrderView>

/** Shapes an order row for the API. */
export function toOrderView(row: OrderRow): OrderView {
  return {
    id: String(row.timetick),
    flow: row.flow,
    currency: row.currency,
    amount: fromMinorUnits(row.amount),
    fee: fromMinorUnits(row.fee),
    total: fromMinorUnits(row.total),
    state: 'pending',
    address: row.address,
    transaction_id: String(row.wallet_tx_id),
    created: new Date(row.created).toISOString(),
    expires: new Date(row.expires).toISOString(),
  }
}
