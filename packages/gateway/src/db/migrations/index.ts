import type { Migrations } from '@atrium/platform'
import * as initial from './0001-initial.ts'
import * as eventCursors from './0002-event-cursors.ts'

/** Every gateway database migration, in order. */
export const gatewayMigrations: Migrations = {
  '0001-initial': initial,
  '0002-event-cursors': eventCursors,
}
