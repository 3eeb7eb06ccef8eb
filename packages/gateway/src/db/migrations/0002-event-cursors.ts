import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/** The events poller's cursor per module, so a restarted gateway resumes where it stopped. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_cursors')
    .addColumn('module', c.text, primaryKey())
    .addColumn('tick', c.id, d(0))
    .addColumn('updated', c.time, d(0))
    .execute()
}
