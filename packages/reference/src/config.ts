import { commonSettings, loadConfig, moduleEventsSettings, type Settings } from '@atrium/platform'
import { Type } from 'typebox'
import { toMinorUnits } from './money.ts'

const commonReference = (port: number) => commonSettings({ host: '127.0.0.1', port })

/** Settings of the reference wallet module. */
export const walletSettings = Type.Object(
  {
    ...commonReference(8082),
    WalletDB: Type.String({
      default: 'sqlite:data/wallet.db',
      description: 'Wallet database: `sqlite:<path>` or `postgres://…`.',
    }),
    TransferFeeBasisPoints: Type.Integer({
      default: 0,
      minimum: 0,
      maximum: 10_000,
      description: 'Fee of a wallet transfer in hundredths of a percent of the amount (100 = 1 %), paid by the sender.',
    }),
    IdempotencyKeyHours: Type.Integer({
      default: 24,
      minimum: 24,
      maximum: 8760,
      description:
        'How long an `Idempotency-Key` of `POST /wallet/v1/send` is honoured, in hours (at least 24); older keys are forgotten lazily.',
    }),
    Events: Type.Object(
      {
        ...moduleEventsSettings,
      },
      { default: {}, additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)

/** Settings of the reference CRM module. */
export const crmSettings = Type.Object(
  {
    ...commonReference(8083),
    CrmDB: Type.String({
      default: 'sqlite:data/crm.db',
      description: 'CRM database: `sqlite:<path>` or `postgres://…`.',
    }),
  },
  { additionalProperties: false },
)

const CURRENCY = '^[A-Z][A-Z0-9]{2,9}$'
const FLOW_NAME = /^[a-z][a-z0-9_-]{0,31}$/

/** The tariff and payee of one payment flow (docs/payment.md). */
const paymentFlow = Type.Object(
  {
    FeeBasisPoints: Type.Integer({ minimum: 0, maximum: 10_000, description: 'Fee in hundredths of a percent.' }),
    FixedFee: Type.Number({ minimum: 0, description: 'Fee added per order, in the order currency.' }),
    MinAmount: Type.Number({ exclusiveMinimum: 0, description: 'Smallest amount an order may have.' }),
    MaxAmount: Type.Number({ exclusiveMinimum: 0, description: 'Largest amount an order may have.' }),
    Currencies: Type.Array(Type.String({ pattern: CURRENCY }), { minItems: 1, uniqueItems: true }),
    Address: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Where the payer pays; `{order}` is replaced by the order id.',
    }),
    PartnerName: Type.String({ maxLength: 200, description: 'The external party the wallet shows.' }),
  },
  { additionalProperties: false },
)

/** Settings of the reference payment module. */
export const paymentSettings = Type.Object(
  {
    ...commonReference(8085),
    PaymentDB: Type.String({
      default: 'sqlite:data/payment.db',
      description: 'Payment database: `sqlite:<path>` or `postgres://…`.',
    }),
    WalletUrl: Type.String({
      default: 'http://127.0.0.1:8082',
      format: 'uri',
      description:
        'Internal base URL of the wallet module, whose `/private/v1/deposit` records each order’s transaction.',
    }),
    WalletTimeoutMs: Type.Integer({
      default: 5000,
      minimum: 100,
      maximum: 60_000,
      description: 'How long an order waits for the wallet before it is refused (code 4103) and nothing is kept.',
    }),
    OrderTtlMinutes: Type.Integer({
      default: 60,
      minimum: 1,
      maximum: 10_080,
      description: 'Minutes from an order’s creation to its `expires`.',
    }),
    IdempotencyKeyHours: Type.Integer({
      default: 24,
      minimum: 24,
      maximum: 8760,
      description:
        'How long an `Idempotency-Key` of `payment_order_start` is honoured, in hours (at least 24); older keys are forgotten lazily.',
    }),
    Flows: Type.Record(Type.String(), paymentFlow, {
      default: {
        card: {
          FeeBasisPoints: 290,
          FixedFee: 0.3,
          MinAmount: 1,
          MaxAmount: 10_000,
          Currencies: ['USD', 'EUR'],
          Address: 'https://pay.example.com/card/{order}',
          PartnerName: 'Card payment',
        },
        crypto: {
          FeeBasisPoints: 100,
          FixedFee: 0,
          MinAmount: 10,
          MaxAmount: 100_000,
          Currencies: ['USDT'],
          Address: 'https://pay.example.com/crypto/{order}',
          PartnerName: 'Crypto payment',
        },
        service: {
          FeeBasisPoints: 0,
          FixedFee: 0,
          MinAmount: 0.01,
          MaxAmount: 1000,
          Currencies: ['USD', 'EUR'],
          Address: 'service:{order}',
          PartnerName: 'Service payment',
        },
      },
      description:
        'Payment flows by name, each `{FeeBasisPoints, FixedFee, MinAmount, MaxAmount, Currencies, Address, PartnerName}` (docs/payment.md); the defaults are for development, with example.com checkout addresses.',
    }),
  },
  { additionalProperties: false },
)

export type WalletConfig = Settings<typeof walletSettings>
export type CrmConfig = Settings<typeof crmSettings>
export type PaymentConfig = Settings<typeof paymentSettings>

/** Loads and validates the reference wallet's settings. */
export function loadWalletConfig(file: unknown, env: Record<string, string | undefined>): WalletConfig {
  return loadConfig(walletSettings, {
    source: 'wallet',
    file,
    env,
    refine: (config) =>
      config.Events.DefaultLimit > config.Events.MaxLimit
        ? ['Events.DefaultLimit: must not exceed Events.MaxLimit']
        : [],
  })
}

/** Loads and validates the reference CRM's settings. */
export function loadCrmConfig(file: unknown, env: Record<string, string | undefined>): CrmConfig {
  return loadConfig(crmSettings, { source: 'crm', file, env })
}

/** Loads and validates the reference payment module's settings; amounts must be whole cents. */
export function loadPaymentConfig(file: unknown, env: Record<string, string | undefined>): PaymentConfig {
  return loadConfig(paymentSettings, { source: 'payment', file, env, refine: flowProblems })
}

function flowProblems(config: PaymentConfig): string[] {
  const problems: string[] = []
  for (const [name, flow] of Object.entries(config.Flows)) {
    if (!FLOW_NAME.test(name)) problems.push(`Flows.${name}: a flow name is 1–32 of a-z, 0-9, _ and -, from a letter`)
    const cents = (setting: 'FixedFee' | 'MinAmount' | 'MaxAmount', value: number) => {
      if (value === 0 && setting === 'FixedFee') return
      try {
        toMinorUnits(value)
      } catch {
        problems.push(`Flows.${name}.${setting}: must be a positive amount with at most two decimal places`)
      }
    }
    cents('FixedFee', flow.FixedFee)
    cents('MinAmount', flow.MinAmount)
    cents('MaxAmount', flow.MaxAmount)
    if (flow.MinAmount > flow.MaxAmount) problems.push(`Flows.${name}.MinAmount: must not exceed MaxAmount`)
  }
  return problems
}
