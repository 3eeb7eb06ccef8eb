import { markReplayed, readIdempotencyKey, type Service, TIMETICK_PATTERN } from '@atrium/platform'
import { Type } from 'typebox'
import { Amount, Currency, toMinorUnits } from '../../money.ts'
import { requireUser } from '../caller.ts'
import type { WalletStore } from '../store.ts'
import { BalanceView, TransactionView, toTransactionView } from '../views.ts'
import { sendOnce } from './idempotent-send.ts'

export interface TransactionsPluginOptions {
  store: WalletStore
  feeBasisPoints: number
  /** How long an Idempotency-Key of send is honoured, in hours. */
  idempotencyKeyHours: number
  /** The clock idempotency keys are dated by. */
  now: () => number
}

/** A user id as a decimal string; never 0. */
export const UserId = Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'A CRM id; never 0.' })

/** Longest transfer comment in characters. */
export const MAX_COMMENT = 500

const listTransactions = {
  summary: 'The caller’s transactions, newest first',
  querystring: Type.Object(
    {
      currency: Type.Optional(Currency),
      limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
      before: Type.Optional(
        Type.String({ pattern: TIMETICK_PATTERN, description: 'Cursor: `next` of the previous page.' }),
      ),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      transactions: Type.Array(TransactionView),
      next: Type.String({ description: 'The `before` of the next page; empty on the last page.' }),
    }),
  },
}

const send = {
  summary: 'Send funds to another user',
  description:
    'An `Idempotency-Key` header (1–64 of `A-Za-z0-9_.:-`) makes a repeat answer the first outcome ' +
    '(with `Idempotent-Replayed: true`) instead of paying again.',
  body: Type.Object(
    {
      to: UserId,
      currency: Currency,
      amount: Amount,
      comment: Type.Optional(Type.String({ maxLength: MAX_COMMENT })),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ transaction: TransactionView, balance: BalanceView }) },
}

/** GET /wallet/v1/transactions and POST /wallet/v1/send, for the signed-in user. */
export default async function transactionsPlugin(
  app: Service,
  { store, feeBasisPoints, idempotencyKeyHours, now }: TransactionsPluginOptions,
) {
  app.get('/transactions', { schema: listTransactions }, async (request) => {
    const { crmId } = requireUser(request)
    const { currency = '', limit, before = '0' } = request.query
    // One row more than asked tells whether another page follows.
    const rows = await store.transactions.listFor(crmId, { currency, before: Number(before), limit: limit + 1 })
    const page = rows.slice(0, limit)
    return {
      transactions: page.map((row) => toTransactionView(row, crmId)),
      next: rows.length > limit ? String(page.at(-1)!.timetick) : '',
    }
  })

  app.post('/send', { schema: send }, async (request, reply) => {
    const { crmId, appId } = requireUser(request)
    const key = readIdempotencyKey(request)
    const { to, currency, amount, comment = '' } = request.body
    const input = {
      from: crmId,
      to: Number(to),
      currency,
      amount: toMinorUnits(amount),
      feeBasisPoints,
      appId,
      comment,
    }
    const { answer, replayed } = await sendOnce(store, input, {
      key,
      retentionHours: idempotencyKeyHours,
      now: now(),
    })
    if (replayed) markReplayed(reply)
    return answer
  })
}
