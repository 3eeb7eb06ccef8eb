import type { Migrations } from '@atrium/platform'
import * as initial from './0001-initial.ts'

/** Every ChatDB migration, in order. */
export const chatMigrations: Migrations = {
  '0001-initial': initial,
}
