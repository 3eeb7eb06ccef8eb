import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * Telegram chat notifications shared by every chat instance (docs/delivery.md, "Telegram"): the
 * one row `notifications` holds the feed cursor the notifications have reached, and the lease of
 * the instance sending them (`holder`, a random id per start; `lease_until`, epoch ms). One
 * instance sends at a time; another takes over once the lease has run out or was given back.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('telegram_state')
    .addColumn('name', c.text, primaryKey())
    .addColumn('cursor', c.id, d(0))
    .addColumn('holder', c.text, d(''))
    .addColumn('lease_until', c.time, d(0))
    .execute()
}
