import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/** Browser Web Push subscriptions, one row per push endpoint, owned by the user who subscribed it last. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('push_subscriptions')
    .addColumn('id', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('endpoint', c.text, d(''))
    .addColumn('p256dh', c.text, d(''))
    .addColumn('auth', c.text, d(''))
    .addColumn('user_agent', c.text, d(''))
    .addColumn('created', c.time, d(0))
    .addColumn('last_success', c.time, d(0))
    .addColumn('failures', c.integer, d(0))
    .addColumn('last_error', c.text, d(''))
    .execute()
  await db.schema
    .createIndex('push_subscriptions_endpoint')
    .on('push_subscriptions')
    .column('endpoint')
    .unique()
    .execute()
  await db.schema.createIndex('push_subscriptions_user').on('push_subscriptions').column('crm_id').execute()
}
