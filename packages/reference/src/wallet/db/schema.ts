/**
 * The WalletDB tables as Kysely sees them. Every column is NOT NULL with a default (spec: no NULL
 * fields); ids and ticks are timeticks; money is stored in integer hundredths of the currency unit
 * ("minor units"), so sums are exact.
 */

/** The wallet of one user in one currency. */
export interface BalancesTable {
  crm_id: number
  /** Currency code, e.g. `USD`. */
  currency: string
  /** Funds in the wallet, in minor units. */
  balance: number
  /** Part of the balance reserved for pending withdrawals, in minor units; available = balance − hold. */
  hold: number
  timetick_update: number
}

/** A wallet transaction: a deposit, a transfer between two users or a withdrawal. */
export interface TransactionsTable {
  /** Transaction id. */
  timetick: number
  timetick_update: number
  currency: string
  /** TxType. */
  tx_type: number
  /** TxState. */
  state: number
  /** Amount moved, in minor units, always positive. */
  amount: number
  /** Fee paid by the sender on top of the amount, in minor units. */
  fee: number
  /** User whose wallet is debited; 0 for deposits. */
  from_crm: number
  /** User whose wallet is credited; 0 for withdrawals. */
  to_crm: number
  /** App the initiating call came through (X-AppId); 0 for none. */
  app_id: number
  /** External party of a deposit or withdrawal (card, bank, payment provider); empty for none. */
  partner_name: string
  comment: string
}

/** One wallet event for one user, and for the transaction's app when it has one. */
export interface WalletEventsTable {
  /** Event id: when it was recorded. */
  timetick: number
  /** The cursor value of /private/v1/events (timetick_update of the spec). */
  tick_update: number
  /** CRM id the event is for. */
  addressee: number
  /** App the event is also for; 0 for none. */
  app_id: number
  event_type: string
  /** Event data as JSON text, without `tick` (added when read). */
  data: string
}

/** An Idempotency-Key a sender gave POST /wallet/v1/send, with the answer it got (docs/wallet.md). */
export interface IdempotencyKeysTable {
  /** The sender. */
  crm_id: number
  idem_key: string
  /** SHA-256 of the request's recipient, currency, amount in minor units and comment. */
  fingerprint: string
  /** The transfer the key made. */
  tx_id: number
  /** The answer, as JSON: the transaction and the sender's wallet right after it. */
  response: string
  /** When the key was first used, epoch milliseconds. */
  created: number
}

export interface WalletDatabase {
  balances: BalancesTable
  transactions: TransactionsTable
  wallet_events: WalletEventsTable
  idempotency_keys: IdempotencyKeysTable
}
