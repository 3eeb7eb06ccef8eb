import type { Migrations } from '@atrium/platform'
import * as initial from './0001-initial.ts'

/** Every PaymentDB migration, in order. */
export const paymentMigrations: Migrations = {
  '0001-initial': initial,
}
