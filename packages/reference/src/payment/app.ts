import { createTimetickGenerator, type Service } from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import type { PaymentConfig } from '../config.ts'
import { openReferenceService } from '../reference-service.ts'
import { paymentMigrations } from './db/migrations/index.ts'
import type { PaymentDatabase } from './db/schema.ts'
import ordersPlugin from './orders/orders.plugin.ts'
import { createWalletDeposits } from './orders/wallet-deposits.ts'

/**
 * Builds the reference payment module with its database migrated: POST
 * /payment/v1/payment_order_start, which applies a flow's tariff and has the wallet record the
 * order's pending deposit. See docs/payment.md. The caller listens.
 */
export async function buildPayment(
  config: PaymentConfig,
  { logger = false, now = Date.now }: { logger?: FastifyServerOptions['logger']; now?: () => number } = {},
): Promise<Service> {
  const { app, database } = await openReferenceService<PaymentDatabase>({
    name: 'payment',
    databaseUrl: config.PaymentDB,
    migrations: paymentMigrations,
    serviceSecret: config.ServiceSecret,
    platformDevHost: config.PlatformDevHost,
    logger,
    metrics: config.Metrics,
    readinessTimeoutMs: config.Readiness.TimeoutMs,
  })

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
