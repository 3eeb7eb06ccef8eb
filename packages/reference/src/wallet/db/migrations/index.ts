import type { Migrations } from '@atrium/platform'
import * as initial from './0001-initial.ts'

/** Every WalletDB migration, in order. */
export const walletMigrations: Migrations = {
  '0001-initial': initial,
}
