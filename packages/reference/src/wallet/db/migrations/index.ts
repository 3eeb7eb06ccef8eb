import type { Migrations } from '@atrium/platform'
import * as initial from './0001-initial.ts'
import * as idempotencyKeys from './0002-idempotency-keys.ts'

/** Every WalletDB migration, in order. */
export const walletMigrations: Migrations = {
  '0001-initial': initial,
  '0002-idempotency-keys': idempotencyKeys,
}
