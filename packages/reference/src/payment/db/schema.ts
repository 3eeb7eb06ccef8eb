/**
 * The PaymentDB tables as Kysely sees them. Every column is NOT NULL with a default (spec: no NULL
 * fields); ids are timeticks; money is in integer hundredths of the currency unit (minor units).
 */

/** A payment order: what a user is to pay through a flow, and the wallet transaction it will credit. */
export interface PaymentOrdersTable {
  /** Order id. */
  timetick: number
  /** The user (X-Crm) the order credits. */
  crm_id: number
  /** The app the order was started through (X-AppId); 0 for none. */
  app_id: number
  /** The flow's name in the Flows setting. */
  flow: string
  currency: string
  /** What the wallet is credited, in minor units. */
  amount: number
  /** The tariff's fee, in minor units. */
  fee: number
  /** amount + fee: what the payer pays, in minor units. */
  total: number
  /** `pending`. */
  state: string
  /** Where the payer pays (the flow's Address with the order id). */
  address: string
  /** The pending deposit the wallet recorded for this order. */
  wallet_tx_id: number
  /** Epoch milliseconds. */
  created: number
  expires: number
}

/** An Idempotency-Key a user gave payment_order_start, with the order it made (docs/payment.md). */
export interface OrderKeysTable {
  crm_id: number
  idem_key: string
  /** SHA-256 of the request's flow, currency and amount in minor units. */
  fingerprint: string
  order_id: number
  /** When the key was first used, epoch milliseconds. */
  created: number
}

export interface PaymentDatabase {
  payment_orders: PaymentOrdersTable
  order_keys: OrderKeysTable
}
