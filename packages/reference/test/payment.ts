import type { TestContext } from 'node:test'
import { createDatabase, type DatabaseDialect, signedHeaders } from '@atrium/platform'
import { closeAfterTest, createMigratedTestDatabaseUrl, json, listen } from '@atrium/platform/testing'
import { loadPaymentConfig } from '../src/config.ts'
import { buildPayment } from '../src/payment/app.ts'
import { paymentMigrations } from '../src/payment/db/migrations/index.ts'
import type { PaymentDatabase } from '../src/payment/db/schema.ts'
import { type CallResult, SERVICE_SECRET } from './support.ts'

/** The flows payment tests use, so that expected fees are computed from values the test can see. */
export const TEST_FLOWS = {
  card: {
    FeeBasisPoints: 290,
    FixedFee: 0.3,
    MinAmount: 1,
    MaxAmount: 5000,
    Currencies: ['USD', 'EUR'],
    Address: 'https://pay.test/card/{order}',
    PartnerName: 'Card payment',
  },
  service: {
    FeeBasisPoints: 0,
    FixedFee: 0,
    MinAmount: 0.01,
    MaxAmount: 100,
    Currencies: ['USD'],
    Address: 'service:{order}',
    PartnerName: 'Service payment',
  },
}

export interface PaymentOptions {
  /** The wallet's base URL. */
  walletUrl: string
  settings?: Record<string, unknown>
  /** An existing payment database (a second instance on the same data). */
  url?: string
  /** The module's clock; the real one when omitted. */
  now?: () => number
}

/** Starts the payment module on a fresh database of the dialect and an ephemeral port, with the test flows. */
export async function startPayment(t: TestContext, dialect: DatabaseDialect, options: PaymentOptions) {
  const url = options.url ?? (await createMigratedTestDatabaseUrl(t, dialect, paymentMigrations))
  const config = loadPaymentConfig(
    {
      PaymentDB: url,
      ServiceSecret: SERVICE_SECRET,
      WalletUrl: options.walletUrl,
      Flows: TEST_FLOWS,
      ...options.settings,
    },
    {},
  )
  const app = await buildPayment(config, { logger: { level: process.env.PAYMENT_LOG ?? 'silent' }, now: options.now })
  const base = await listen(t, app)
  const database = createDatabase<PaymentDatabase>(url)
  closeAfterTest(t, () => database.destroy())

  /** POST /payment/v1/payment_order_start as the gateway would send it for a user. */
  async function start(crmId: number, body: object, headers: Record<string, string> = {}): Promise<CallResult> {
    const path = '/payment/v1/payment_order_start'
    const all = { 'content-type': 'application/json', ...(crmId ? { 'X-Crm': String(crmId) } : {}), ...headers }
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: signedHeaders(SERVICE_SECRET, 'POST', path, all),
      body: JSON.stringify(body),
    })
    const envelope = await json(response)
    return { status: response.status, headers: response.headers, result: envelope.result, error: envelope.error }
  }

  return {
    base,
    url,
    start,
    /** Every stored order, oldest first. */
    orders: () => database.db.selectFrom('payment_orders').selectAll().orderBy('timetick').execute(),
    /** Every stored Idempotency-Key. */
    keys: () => database.db.selectFrom('order_keys').selectAll().execute(),
  }
}
