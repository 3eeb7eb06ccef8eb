import { timetickTime } from '@atrium/platform'
import { type Static, Type } from 'typebox'
import { fromMinorUnits } from '../money.ts'
import type { BalanceRow } from './balances.repository.ts'
import type { TransactionRow } from './transactions/transactions.repository.ts'

/** A wallet as the API shows it (the shape of the MCP tool wallet_balance). */
export const BalanceView = Type.Object({
  currency: Type.String(),
  balance: Type.Number({ description: 'Funds in the wallet.' }),
  hold: Type.Number({ description: 'Part of the balance reserved for pending transactions.' }),
  available: Type.Number({ description: 'balance − hold: what can be sent or withdrawn.' }),
})
export type BalanceView = Static<typeof BalanceView>

/** The other side of a transaction as its viewer sees it. */
export const PartnerView = Type.Object({
  crm_id: Type.String({ description: 'The other user of a transfer; "0" for an external party.' }),
  name: Type.String({ description: 'The external party of a deposit or withdrawal; empty for a user.' }),
})

/** A transaction from one party's side; also the data of TxInWallet and TxStateChanged (spec: "Wallet event data"). */
export const TransactionView = Type.Object({
  id: Type.String({ description: 'Transaction id (a timetick as a decimal string).' }),
  currency: Type.String(),
  tx_type: Type.Integer({ description: 'TxType: 1 deposit, 2 transfer, 3 withdrawal.' }),
  state: Type.Integer({ description: 'TxState: 1 pending, 2 completed, 3 failed.' }),
  amount: Type.Number({ description: 'Signed for the viewer: negative when it leaves their wallet.' }),
  fee: Type.Number({ description: 'Fee the viewer pays on top of the amount; 0 for the receiving side.' }),
  datetime: Type.String({ description: 'When the transaction was created, ISO 8601 UTC.' }),
  partner: Type.Optional(PartnerView),
  comment: Type.String(),
})
export type TransactionView = Static<typeof TransactionView>

/** Shapes a wallet row for the API. */
export function toBalanceView(row: BalanceRow): BalanceView {
  return {
    currency: row.currency,
    balance: fromMinorUnits(row.balance),
    hold: fromMinorUnits(row.hold),
    available: fromMinorUnits(row.balance - row.hold),
  }
}

/** Shapes a transaction as `viewer` (one of its parties) sees it. */
export function toTransactionView(row: TransactionRow, viewer: number): TransactionView {
  const paying = row.from_crm === viewer
  const partnerCrm = paying ? row.to_crm : row.from_crm
  const view: TransactionView = {
    id: String(row.timetick),
    currency: row.currency,
    tx_type: row.tx_type,
    state: row.state,
    amount: fromMinorUnits(paying ? -row.amount : row.amount),
    fee: fromMinorUnits(paying ? row.fee : 0),
    datetime: new Date(timetickTime(row.timetick)).toISOString(),
    comment: row.comment,
  }
  if (partnerCrm !== 0 || row.partner_name !== '') view.partner = { crm_id: String(partnerCrm), name: row.partner_name }
  return view
}
