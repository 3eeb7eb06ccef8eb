import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/** Display names of members, so a private chat can be named after the other participant. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('chat_profiles')
    .addColumn('member', c.id, primaryKey())
    .addColumn('name', c.text, d(''))
    .addColumn('timetick_update', c.id, d(0))
    .execute()
}
