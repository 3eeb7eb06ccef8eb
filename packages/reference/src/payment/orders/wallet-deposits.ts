import { ApiError, signedHeaders } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import { fromMinorUnits } from '../../money.ts'

export interface WalletDepositsOptions {
  /** Internal base URL of the wallet module. */
  walletUrl: string
  serviceSecret: string
  timeoutMs: number
}

export interface PendingDeposit {
  crmId: number
  appId: number
  currency: string
  /** Minor units. */
  amount: number
  partnerName: string
  comment: string
}

/**
 * The wallet's internal operations an order needs (docs/wallet.md, "Internal operations"), signed
 * with the inter-service credential: a pending deposit that the user's wallet shows at once, and
 * failing it again when the order could not be kept. Every failure to record the deposit answers
 * WalletUnavailable; the wallet's own answer goes to the log only.
 */
export function createWalletDeposits({ walletUrl, serviceSecret, timeoutMs }: WalletDepositsOptions) {
  const base = walletUrl.replace(/\/+$/, '')

  async function call(path: string, body: object, appId: number) {
    const url = `${base}/private/v1/${path}`
    const headers = { 'content-type': 'application/json', ...(appId ? { 'x-appid': String(appId) } : {}) }
    const response = await fetch(url, {
      method: 'POST',
      headers: signedHeaders(serviceSecret, 'POST', url, headers),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const text = await response.text()
    return { status: response.status, text }
  }

  return {
    /** Records the pending deposit of an order; answers the wallet transaction's id. */
    async startPending(log: FastifyBaseLogger, deposit: PendingDeposit): Promise<number> {
      let status = 0
      let answer = ''
      try {
        ;({ status, text: answer } = await call(
          'deposit',
          {
            crm_id: String(deposit.crmId),
            currency: deposit.currency,
            amount: fromMinorUnits(deposit.amount),
            partner_name: deposit.partnerName,
            comment: deposit.comment,
            state: 1,
          },
          deposit.appId,
        ))
        const id = status === 200 ? Number(JSON.parse(answer)?.result?.transaction?.id) : Number.NaN
        if (Number.isSafeInteger(id) && id > 0) return id
      } catch (error) {
        answer = (error as Error).message
      }
      log.warn({ status, answer: answer.slice(0, 500) }, 'payment order refused: the wallet did not record its deposit')
      throw new ApiError(
        'WalletUnavailable',
        'the wallet could not record the payment order’s transaction; no order was created, try again',
      )
    },

    /** Fails a pending deposit whose order could not be stored; a failure here is only logged. */
    async failPending(log: FastifyBaseLogger, transactionId: number): Promise<void> {
      try {
        const { status, text } = await call('transactions/state', { id: String(transactionId), state: 3 }, 0)
        if (status === 200) return
        log.error({ transactionId, status, answer: text.slice(0, 500) }, 'could not fail an orphaned wallet deposit')
      } catch (error) {
        log.error({ transactionId, error: (error as Error).message }, 'could not fail an orphaned wallet deposit')
      }
    },
  }
}

export type WalletDeposits = ReturnType<typeof createWalletDeposits>
