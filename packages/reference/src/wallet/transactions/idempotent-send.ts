import { fingerprintOf, isUniqueViolation, keyCutoff, requireSameRequest } from '@atrium/platform'
import { type TransferInput, transfer } from '../ledger.ts'
import type { WalletStore } from '../store.ts'
import { type BalanceView, type TransactionView, toBalanceView, toTransactionView } from '../views.ts'

/** The answer of POST /wallet/v1/send. */
export interface SendAnswer {
  transaction: TransactionView
  balance: BalanceView
}

export interface SendOutcome {
  answer: SendAnswer
  /** True when the answer is the stored outcome of an earlier request with the same key. */
  replayed: boolean
}

export interface SendOptions {
  /** The request's Idempotency-Key; '' for none. */
  key: string
  /** How long a key is honoured, in hours. */
  retentionHours: number
  now: number
}

/**
 * Performs a transfer at most once per sender and Idempotency-Key. The key is looked up and stored
 * in the transfer's own transaction, under the wallet write lock; the (sender, key) primary key is
 * the last word, so a parallel request that still got past the lookup fails its insert, rolls its
 * transfer back and answers the winner's outcome. A refused transfer stores no key.
 */
export async function sendOnce(
  store: WalletStore,
  input: TransferInput,
  { key, retentionHours, now }: SendOptions,
): Promise<SendOutcome> {
  if (key === '') {
    const { transaction, balance } = await store.transact((unit) => transfer(unit, input))
    return { answer: answerOf(transaction, balance, input.from), replayed: false }
  }
  const fingerprint = fingerprintOf([input.to, input.currency, input.amount, input.comment])
  const notBefore = keyCutoff(now, retentionHours)

  async function replay(stored: { fingerprint: string; response: string }): Promise<SendOutcome> {
    requireSameRequest(stored.fingerprint, fingerprint, key)
    return { answer: JSON.parse(stored.response) as SendAnswer, replayed: true }
  }

  try {
    return await store.transact(async (unit): Promise<SendOutcome> => {
      const stored = await unit.idempotencyKeys.find(input.from, key, notBefore)
      if (stored) return replay(stored)
      // Keys older than the retention are forgotten here, lazily; this also frees this one.
      await unit.idempotencyKeys.pruneBefore(notBefore)
      const { transaction, balance } = await transfer(unit, input)
      const answer = answerOf(transaction, balance, input.from)
      await unit.idempotencyKeys.insert({
        crm_id: input.from,
        idem_key: key,
        fingerprint,
        tx_id: transaction.timetick,
        response: JSON.stringify(answer),
        created: now,
      })
      return { answer, replayed: false }
    })
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    const stored = await store.idempotencyKeys.find(input.from, key, notBefore)
    if (!stored) throw error
    return replay(stored)
  }
}

function answerOf(
  transaction: Parameters<typeof toTransactionView>[0],
  balance: Parameters<typeof toBalanceView>[0],
  sender: number,
) {
  return { transaction: toTransactionView(transaction, sender), balance: toBalanceView(balance) }
}
