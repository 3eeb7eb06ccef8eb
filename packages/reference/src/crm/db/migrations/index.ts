import type { Migrations } from '@atrium/platform'
import * as initial from './0001-initial.ts'

/** Every CrmDB migration, in order. */
export const crmMigrations: Migrations = {
  '0001-initial': initial,
}
