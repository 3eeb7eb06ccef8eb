import type { Service } from '@atrium/platform'
import { Type } from 'typebox'
import { Currency } from '../../money.ts'
import { requireUser } from '../caller.ts'
import type { WalletStore } from '../store.ts'
import { BalanceView, toBalanceView } from '../views.ts'

export interface BalancePluginOptions {
  store: WalletStore
}

const getBalance = {
  summary: 'The caller’s wallet in one currency',
  querystring: Type.Object({ currency: Currency }, { additionalProperties: false }),
  response: { 200: BalanceView },
}

const getBalances = {
  summary: 'Every wallet of the caller',
  response: { 200: Type.Object({ balances: Type.Array(BalanceView) }) },
}

/** GET /wallet/v1/balance and /wallet/v1/balances: the caller's wallets; an unused currency reads as zero. */
export default async function balancePlugin(app: Service, { store }: BalancePluginOptions) {
  app.get('/balance', { schema: getBalance }, async (request) => {
    const { crmId } = requireUser(request)
    return toBalanceView(await store.balances.find(crmId, request.query.currency))
  })

  app.get('/balances', { schema: getBalances }, async (request) => {
    const { crmId } = requireUser(request)
    return { balances: (await store.balances.listFor(crmId)).map(toBalanceView) }
  })
}
