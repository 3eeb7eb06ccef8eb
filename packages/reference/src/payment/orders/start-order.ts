import type { Database, TimetickGenerator } from '@atrium/platform'
import { fingerprintOf, isUniqueViolation, keyCutoff, requireSameRequest } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { PaymentDatabase } from '../db/schema.ts'
import { createOrdersRepository, type OrderRow } from './orders.repository.ts'
import type { Quote } from './tariff.ts'
import type { WalletDeposits } from './wallet-deposits.ts'

export interface OrderRequest {
  crmId: number
  appId: number
  flowName: string
  currency: string
  quote: Quote
  /** The request's Idempotency-Key; '' for none. */
  key: string
}

export interface OrderStarter {
  database: Database<PaymentDatabase>
  nextTick: TimetickGenerator
  wallet: WalletDeposits
  ttlMinutes: number
  keyHours: number
  /** The clock orders and keys are dated by. */
  now: () => number
}

export interface StartedOrder {
  order: OrderRow
  /** True when the order is the one an earlier request with the same key started. */
  replayed: boolean
}

/**
 * Starts an order: claims the Idempotency-Key, has the wallet record the pending deposit and
 * stores the order, all inside one database transaction, so that an order exists only with its
 * wallet transaction and a key starts one order at most (a parallel request with the same key
 * waits for the first, then answers its order). A wallet failure rolls everything back, the key
 * included; an order that cannot be stored after the wallet answered fails the deposit again.
 */
export async function startOrder(starter: OrderStarter, request: OrderRequest, log: FastifyBaseLogger) {
  const { database, nextTick, wallet } = starter
  const { crmId, key, quote } = request
  const now = starter.now()
  const notBefore = keyCutoff(now, starter.keyHours)
  const fingerprint = fingerprintOf([request.flowName, request.currency, quote.amount])
  const orders = createOrdersRepository(database.db)

  async function replay(): Promise<StartedOrder | undefined> {
    const stored = await orders.findKey(crmId, key, notBefore)
    if (!stored) return undefined
    requireSameRequest(stored.fingerprint, fingerprint, key)
    const order = await orders.find(stored.order_id)
    return order && { order, replayed: true }
  }

  if (key !== '') {
    const earlier = await replay()
    if (earlier) return earlier
  }
  const id = nextTick()
  let walletTx = 0
  try {
    const order = await database.db.transaction().execute(async (trx) => {
      const unit = createOrdersRepository(trx)
      if (key !== '') {
        await unit.pruneKeysBefore(notBefore)
        await unit.insertKey({ crm_id: crmId, idem_key: key, fingerprint, order_id: id, created: now })
      }
      walletTx = await wallet.startPending(log, {
        crmId,
        appId: request.appId,
        currency: request.currency,
        amount: quote.amount,
        partnerName: quote.flow.PartnerName,
        comment: `payment order ${id} (${request.flowName})`,
      })
      const row: OrderRow = {
        timetick: id,
        crm_id: crmId,
        app_id: request.appId,
        flow: request.flowName,
        currency: request.currency,
        amount: quote.amount,
        fee: quote.fee,
        total: quote.total,
        state: 'pending',
        address: quote.flow.Address.replaceAll('{order}', String(id)),
        wallet_tx_id: walletTx,
        created: now,
        expires: now + starter.ttlMinutes * 60_000,
      }
      await unit.insert(row)
      return row
    })
    return { order, replayed: false }
  } catch (error) {
    if (walletTx !== 0) await wallet.failPending(log, walletTx)
    if (key !== '' && isUniqueViolation(error)) {
      const winner = await replay()
      if (winner) return winner
    }
    throw error
  }
}
