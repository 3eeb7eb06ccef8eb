import { columnType as c, notNullDefault as d } from '@atrium/platform'
import type { Kysely } from 'kysely'

/** When a message's content was last edited (0: never); timetick_update also moves on pin and delete. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chat_mess').addColumn('edited', c.id, d(0)).execute()
}
