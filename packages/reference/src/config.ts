import { commonSettings, loadConfig, type Settings } from '@atrium/platform'
import { Type } from 'typebox'

const commonReference = (port: number) => commonSettings({ host: '127.0.0.1', port })

/** Settings of the reference wallet module. */
export const walletSettings = Type.Object(
  {
    ...commonReference(8082),
    WalletDB: Type.String({
      default: 'sqlite:data/wallet.db',
      description: 'Wallet database: `sqlite:<path>` or `postgres://…`.',
    }),
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

export type WalletConfig = Settings<typeof walletSettings>
export type CrmConfig = Settings<typeof crmSettings>

/** Loads and validates the reference wallet's settings. */
export function loadWalletConfig(file: unknown, env: Record<string, string | undefined>): WalletConfig {
  return loadConfig(walletSettings, { source: 'wallet', file, env })
}

/** Loads and validates the reference CRM's settings. */
export function loadCrmConfig(file: unknown, env: Record<string, string | undefined>): CrmConfig {
  return loadConfig(crmSettings, { source: 'crm', file, env })
}
