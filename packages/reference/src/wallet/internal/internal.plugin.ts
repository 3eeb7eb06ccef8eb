import { readIdentity, type Service, TIMETICK_PATTERN } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { type Static, Type } from 'typebox'
import { Amount, Currency, toMinorUnits } from '../../money.ts'
import { deposit, type ExternalInput, initiatorOf, settle, TxState, withdraw } from '../ledger.ts'
import type { WalletStore } from '../store.ts'
import { MAX_COMMENT, UserId } from '../transactions/transactions.plugin.ts'
import { BalanceView, TransactionView, toBalanceView, toTransactionView } from '../views.ts'

export interface InternalPluginOptions {
  store: WalletStore
}

const externalBody = Type.Object(
  {
    crm_id: UserId,
    currency: Currency,
    amount: Amount,
    partner_name: Type.Optional(Type.String({ maxLength: 200, description: 'The external party, e.g. a card.' })),
    comment: Type.Optional(Type.String({ maxLength: MAX_COMMENT })),
  },
  { additionalProperties: false },
)

const externalResponse = { 200: Type.Object({ transaction: TransactionView, balance: BalanceView }) }

const depositBody = Type.Object(
  {
    ...externalBody.properties,
    state: Type.Optional(
      Type.Union([Type.Literal(TxState.Pending), Type.Literal(TxState.Completed)], {
        description: '2 completed (default): credited at once; 1 pending: credited when settled as completed.',
      }),
    ),
  },
  { additionalProperties: false },
)

const setState = {
  summary: 'Complete or fail a pending transaction',
  body: Type.Object(
    {
      id: Type.String({ pattern: TIMETICK_PATTERN, description: 'Transaction id.' }),
      state: Type.Union([Type.Literal(TxState.Completed), Type.Literal(TxState.Failed)], {
        description: '2 completed, 3 failed.',
      }),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ transaction: TransactionView }) },
}

/**
 * Internal wallet operations for core modules (a payment module funds and pays out wallets):
 * POST /private/v1/deposit, /private/v1/withdraw and /private/v1/transactions/state. The gateway
 * never routes /private/ from outside.
 */
export default async function internalPlugin(app: Service, { store }: InternalPluginOptions) {
  function inputOf(body: Static<typeof externalBody>, request: FastifyRequest): ExternalInput {
    const { crm_id, currency, amount, partner_name = '', comment = '' } = body
    return {
      crmId: Number(crm_id),
      currency,
      amount: toMinorUnits(amount),
      partnerName: partner_name,
      comment,
      appId: readIdentity(request).appId,
    }
  }

  app.post(
    '/deposit',
    {
      schema: {
        summary: 'Credit a user’s wallet, at once or pending a payment',
        body: depositBody,
        response: externalResponse,
      },
    },
    async (request) => {
      const { state = TxState.Completed, ...fields } = request.body
      const input = inputOf(fields, request)
      const pending = state === TxState.Pending
      const { transaction, balance } = await store.transact((unit) => deposit(unit, input, pending))
      return { transaction: toTransactionView(transaction, input.crmId), balance: toBalanceView(balance) }
    },
  )

  app.post(
    '/withdraw',
    {
      schema: {
        summary: 'Start a payout: pending, the amount on hold',
        body: externalBody,
        response: externalResponse,
      },
    },
    async (request) => {
      const input = inputOf(request.body, request)
      const { transaction, balance } = await store.transact((unit) => withdraw(unit, input))
      return { transaction: toTransactionView(transaction, input.crmId), balance: toBalanceView(balance) }
    },
  )

  app.post('/transactions/state', { schema: setState }, async (request) => {
    const transaction = await store.transact((unit) => settle(unit, Number(request.body.id), request.body.state))
    return { transaction: toTransactionView(transaction, initiatorOf(transaction)) }
  })
}
