import { createTimetickGenerator, type Service } from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import type { WalletConfig } from '../config.ts'
import { openReferenceService } from '../reference-service.ts'
import balancePlugin from './balance/balance.plugin.ts'
import { walletMigrations } from './db/migrations/index.ts'
import type { WalletDatabase } from './db/schema.ts'
import eventsPlugin from './events/events.plugin.ts'
import internalPlugin from './internal/internal.plugin.ts'
import monitoringPlugin from './monitoring/monitoring.plugin.ts'
import { createWalletStore } from './store.ts'
import transactionsPlugin from './transactions/transactions.plugin.ts'

/**
 * Builds the reference wallet module with its database migrated: only what the gateway touches
 * (balance, transactions, send under /wallet/v1; the events feed, monitoring_stats and the
 * internal operations of a payment module under /private/v1). See docs/wallet.md. The caller listens.
 */
export async function buildWallet(
  config: WalletConfig,
  { logger = false, now = Date.now }: { logger?: FastifyServerOptions['logger']; now?: () => number } = {},
): Promise<Service> {
  const { app, database } = await openReferenceService<WalletDatabase>({
    name: 'wallet',
    databaseUrl: config.WalletDB,
    migrations: walletMigrations,
    serviceSecret: config.ServiceSecret,
    platformDevHost: config.PlatformDevHost,
    logger,
    metrics: config.Metrics,
    readinessTimeoutMs: config.Readiness.TimeoutMs,
  })
  const store = createWalletStore(database, createTimetickGenerator({ node: config.NodeNumber }))
  // Counted at the root when a request arrives, so every route (refusals included) counts, and a
  // response a client has seen is always counted by the time its next request is.
  let requestsServed = 0
  app.addHook('onRequest', async () => {
    requestsServed++
  })

  app.register(
    async function walletOperations(wallet: Service) {
      wallet.register(balancePlugin, { store })
      wallet.register(transactionsPlugin, {
        store,
        feeBasisPoints: config.TransferFeeBasisPoints,
        idempotencyKeyHours: config.IdempotencyKeyHours,
        now,
      })
    },
    { prefix: '/wallet/v1' },
  )
  app.register(internalPlugin, { prefix: '/private/v1', store })
  app.register(monitoringPlugin, { prefix: '/private/v1', database, requestsServed: () => requestsServed })
  app.register(eventsPlugin, {
    prefix: '/private/v1',
    events: store.events,
    defaultLimit: config.Events.DefaultLimit,
    maxLimit: config.Events.MaxLimit,
    maxWaitMs: config.Events.MaxWaitMs,
  })
  return app
}
