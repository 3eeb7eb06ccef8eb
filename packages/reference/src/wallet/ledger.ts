import { ApiError } from '@atrium/platform'
import type { BalanceRow } from './balances.repository.ts'
import type { Unit } from './store.ts'
import type { TransactionRow } from './transactions/transactions.repository.ts'
import { toBalanceView, toTransactionView } from './views.ts'

/** Kinds of wallet transaction (the `tx_type` of spec "Wallet event data"). */
export const TxType = { Deposit: 1, Transfer: 2, Withdrawal: 3 } as const

/** States of a wallet transaction: pending moves to completed or failed, nothing else moves. */
export const TxState = { Pending: 1, Completed: 2, Failed: 3 } as const

/** What every wallet operation needs besides its own fields. */
interface Operation {
  currency: string
  /** Minor units. */
  amount: number
  /** The app the call came through; its events go to the app too. */
  appId: number
  comment: string
}

export interface TransferInput extends Operation {
  from: number
  to: number
  /** Hundredths of a percent of the amount, paid by the sender. */
  feeBasisPoints: number
}

export interface ExternalInput extends Operation {
  crmId: number
  /** The external party (card, bank, provider); may be empty. */
  partnerName: string
}

/** A transaction and the wallet of the party who initiated it, after the operation. */
export interface Outcome {
  transaction: TransactionRow
  balance: BalanceRow
}

/** Moves funds between two users at once: TxInWallet and BalanceChanged for each of them. */
export async function transfer(unit: Unit, input: TransferInput): Promise<Outcome> {
  if (input.from === input.to) throw new ApiError('InvalidRecipient', 'a transfer to yourself moves nothing')
  const fee = Math.round((input.amount * input.feeBasisPoints) / 10_000)
  const sender = await unit.balances.find(input.from, input.currency)
  requireAvailable(sender, input.amount + fee)
  const recipient = await unit.balances.find(input.to, input.currency)
  const transaction = await record(unit, {
    currency: input.currency,
    tx_type: TxType.Transfer,
    state: TxState.Completed,
    amount: input.amount,
    fee,
    from_crm: input.from,
    to_crm: input.to,
    app_id: input.appId,
    partner_name: '',
    comment: input.comment,
  })
  const debited = await move(unit, sender, -(input.amount + fee), 0, transaction)
  const credited = await move(unit, recipient, input.amount, 0, transaction)
  await announce(unit, 'TxInWallet', transaction, input.from, debited)
  await announce(unit, 'TxInWallet', transaction, input.to, credited)
  return { transaction, balance: debited }
}

/**
 * Credits a user's wallet from outside (a payment module): completed at once, or pending (nothing
 * credited yet) until the payment arrives and the transaction is settled.
 */
export async function deposit(unit: Unit, input: ExternalInput, pending = false): Promise<Outcome> {
  const wallet = await unit.balances.find(input.crmId, input.currency)
  const fields = external(input, TxType.Deposit, 0, input.crmId)
  const transaction = await record(unit, pending ? { ...fields, state: TxState.Pending } : fields)
  if (pending) {
    await announce(unit, 'TxInWallet', transaction, input.crmId, undefined)
    return { transaction, balance: wallet }
  }
  const credited = await move(unit, wallet, input.amount, 0, transaction)
  await announce(unit, 'TxInWallet', transaction, input.crmId, credited)
  return { transaction, balance: credited }
}

/** Starts a payout from a user's wallet: pending, with the amount on hold until it completes or fails. */
export async function withdraw(unit: Unit, input: ExternalInput): Promise<Outcome> {
  const wallet = await unit.balances.find(input.crmId, input.currency)
  requireAvailable(wallet, input.amount)
  const transaction = await record(unit, external(input, TxType.Withdrawal, input.crmId, 0))
  const held = await move(unit, wallet, 0, input.amount, transaction)
  await announce(unit, 'TxInWallet', transaction, input.crmId, held)
  return { transaction, balance: held }
}

/**
 * Completes or fails a pending transaction: completing debits the payer's hold and balance and
 * credits the payee; failing releases the hold. Each party gets TxStateChanged and BalanceChanged.
 */
export async function settle(unit: Unit, id: number, state: typeof TxState.Completed | typeof TxState.Failed) {
  const pending = await unit.transactions.find(id)
  if (!pending) throw new ApiError('TransactionNotFound', `transaction ${id} not found`)
  if (pending.state !== TxState.Pending) {
    throw new ApiError('TransactionStateConflict', `transaction ${id} is not pending (state ${pending.state})`)
  }
  const tick = unit.nextTick()
  await unit.transactions.setState(id, state, tick)
  const transaction: TransactionRow = { ...pending, state, timetick_update: tick }
  const total = pending.amount + pending.fee
  const completed = state === TxState.Completed
  if (pending.from_crm !== 0) {
    const payer = await unit.balances.find(pending.from_crm, pending.currency)
    const after = await move(unit, payer, completed ? -total : 0, -total, transaction)
    await announce(unit, 'TxStateChanged', transaction, pending.from_crm, after)
  }
  if (pending.to_crm !== 0) {
    const payee = await unit.balances.find(pending.to_crm, pending.currency)
    const after = completed ? await move(unit, payee, pending.amount, 0, transaction) : undefined
    await announce(unit, 'TxStateChanged', transaction, pending.to_crm, after)
  }
  return transaction
}

/** The party whose side a transaction is shown from when only one side is: the payer, else the payee. */
export function initiatorOf(transaction: TransactionRow): number {
  return transaction.from_crm !== 0 ? transaction.from_crm : transaction.to_crm
}

function requireAvailable(wallet: BalanceRow, needed: number) {
  const available = wallet.balance - wallet.hold
  if (available < needed) {
    throw new ApiError('InsufficientFunds', `available ${wallet.currency} balance does not cover the amount and fee`)
  }
}

function external(
  input: ExternalInput,
  txType: number,
  from: number,
  to: number,
): Omit<TransactionRow, 'timetick' | 'timetick_update'> {
  return {
    currency: input.currency,
    tx_type: txType,
    state: txType === TxType.Withdrawal ? TxState.Pending : TxState.Completed,
    amount: input.amount,
    fee: 0,
    from_crm: from,
    to_crm: to,
    app_id: input.appId,
    partner_name: input.partnerName,
    comment: input.comment,
  }
}

async function record(
  unit: Unit,
  fields: Omit<TransactionRow, 'timetick' | 'timetick_update'>,
): Promise<TransactionRow> {
  const id = unit.nextTick()
  const transaction: TransactionRow = { timetick: id, timetick_update: id, ...fields }
  await unit.transactions.insert(transaction)
  return transaction
}

/** Changes a wallet's balance and hold by the given minor units and stores it. */
async function move(unit: Unit, wallet: BalanceRow, balanceBy: number, holdBy: number, transaction: TransactionRow) {
  const after: BalanceRow = {
    ...wallet,
    balance: wallet.balance + balanceBy,
    hold: wallet.hold + holdBy,
    timetick_update: transaction.timetick_update,
  }
  if (!Number.isSafeInteger(after.balance)) throw new ApiError('InvalidAmount', 'the balance would exceed its limit')
  await unit.balances.save(after)
  return after
}

/**
 * Records the events of one party: the transaction from their side, then their new balance when it
 * moved. The initiator's events also go to the transaction's app, which acted for them.
 */
async function announce(
  unit: Unit,
  type: 'TxInWallet' | 'TxStateChanged',
  transaction: TransactionRow,
  party: number,
  balance: BalanceRow | undefined,
) {
  const appId = party === initiatorOf(transaction) ? transaction.app_id : 0
  await unit.emit({ type, addressee: party, app_id: appId, data: toTransactionView(transaction, party) })
  if (balance) {
    await unit.emit({
      type: 'BalanceChanged',
      addressee: party,
      app_id: appId,
      data: { ...toBalanceView(balance), tx_id: String(transaction.timetick) },
    })
  }
}
