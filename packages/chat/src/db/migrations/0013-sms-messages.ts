import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * Sent SMS and their delivery status (issue 18, item 1): one row per message, keyed for the
 * provider's callbacks by (provider, message_id), which the database keeps unique.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sms_messages')
    .addColumn('timetick', c.id, primaryKey())
    .addColumn('timetick_update', c.id, d(0))
    .addColumn('provider', c.text, d(''))
    .addColumn('message_id', c.text, d(''))
    .addColumn('to_masked', c.text, d(''))
    .addColumn('crm_id', c.id, d(0))
    .addColumn('status', c.text, d(''))
    .addColumn('status_rank', c.integer, d(0))
    .addColumn('provider_status', c.text, d(''))
    .addColumn('error_code', c.text, d(''))
    .execute()
  await db.schema
    .createIndex('sms_messages_provider_message')
    .on('sms_messages')
    .columns(['provider', 'message_id'])
    .unique()
    .execute()
}
