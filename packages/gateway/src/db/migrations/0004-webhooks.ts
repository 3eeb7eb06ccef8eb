import { randomBytes } from 'node:crypto'
import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * Webhooks: each app's signing secret, its cursor in each module's feed, and its deliveries (in
 * flight or dead-lettered). Apps made before this migration get a signing secret here; the
 * operator reads a fresh one with `atrium webhooks secret <appId>`.
 */
// biome-ignore lint/suspicious/noExplicitAny: a migration runs against the schema as it was, not the current one
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('apps').addColumn('webhook_secret', c.text, d('')).execute()
  const apps: { id: number }[] = await db.selectFrom('apps').select('id').execute()
  for (const { id } of apps) {
    await db
      .updateTable('apps')
      .set({ webhook_secret: `whsec_${randomBytes(32).toString('base64url')}` })
      .where('id', '=', id)
      .execute()
  }

  await db.schema
    .createTable('webhook_cursors')
    .addColumn('app_id', c.id, d(0))
    .addColumn('module', c.text, d(''))
    .addColumn('tick', c.id, d(0))
    .addColumn('updated', c.time, d(0))
    .addPrimaryKeyConstraint('webhook_cursors_pk', ['app_id', 'module'])
    .execute()

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', c.id, primaryKey())
    .addColumn('app_id', c.id, d(0))
    .addColumn('module', c.text, d(''))
    .addColumn('first_tick', c.id, d(0))
    .addColumn('last_tick', c.id, d(0))
    .addColumn('event_count', c.integer, d(0))
    .addColumn('body', c.text, d(''))
    .addColumn('state', c.text, d('pending'))
    .addColumn('attempts', c.integer, d(0))
    .addColumn('next_attempt', c.time, d(0))
    .addColumn('last_status', c.integer, d(0))
    .addColumn('last_error', c.text, d(''))
    .addColumn('created', c.time, d(0))
    .addColumn('updated', c.time, d(0))
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_lane')
    .on('webhook_deliveries')
    .columns(['app_id', 'module', 'state', 'id'])
    .execute()
  await db.schema.createIndex('webhook_deliveries_state').on('webhook_deliveries').columns(['state', 'id']).execute()
}
