import {
  buildInfo,
  createDatabase,
  createService,
  createTimetickGenerator,
  installServiceAuth,
  migrateToLatest,
  type Service,
} from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import type { PaymentConfig } from '../config.ts'
import { paymentMigrations } from './db/migrations/index.ts'
import type { PaymentDatabase } from './db/schema.ts'
import ordersPlugin from './orders/orders.plugin.ts'
import { createWalletDeposits } from './orders/wallet-deposits.ts'

const HEALTH_PATH = '/private/v1/health'

/**
 * Builds the reference payment module with its database migrated: POST
 * /payment/v1/payment_order_start, which applies a flow's tariff and has the wallet record the
 * order's pending deposit. See docs/payment.md. The caller listens.
 */
export async function buildPayment(
  config: PaymentConfig,
  { logger = false, now = Date.now }: { logger?: FastifyServerOptions['logger']; now?: () => number } = {},
): Promise<Service> {
  const database = createDatabase<PaymentDatabase>(config.PaymentDB)
  try {
    await migrateToLatest(database, paymentMigrations)
  } catch (error) {
    await database.destroy()
    throw error
  }

  const app = createService({
    name: 'payment',
    healthPath: HEALTH_PATH,
    domainGuard: { domain: buildInfo?.domain ?? null, devHost: config.PlatformDevHost },
    logger,
  })
  installServiceAuth(app, { secret: config.ServiceSecret, exempt: [HEALTH_PATH] })
  app.addHook('onClose', () => database.destroy())

  app.register(ordersPlugin, {
    prefix: '/payment/v1',
    flows: config.Flows,
    starter: {
      database,
      nextTick: createTimetickGenerator({ node: config.NodeNumber }),
      wallet: createWalletDeposits({
        walletUrl: config.WalletUrl,
        serviceSecret: config.ServiceSecret,
        timeoutMs: config.WalletTimeoutMs,
      }),
      ttlMinutes: config.OrderTtlMinutes,
      keyHours: config.IdempotencyKeyHours,
      now,
    },
  })
  return app
}
