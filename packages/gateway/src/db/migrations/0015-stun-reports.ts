import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/** What signed-in clients reported about their ICE gathering (POST /auth/v1/stun/report, docs/stun.md). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('stun_reports')
    .addColumn('id', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('ip', c.text, d(''))
    .addColumn('user_agent', c.text, d(''))
    .addColumn('report', c.json, d('{}'))
    .addColumn('created', c.time, d(0))
    .execute()
  await db.schema.createIndex('stun_reports_user').on('stun_reports').columns(['crm_id', 'id']).execute()
  await db.schema.createIndex('stun_reports_created').on('stun_reports').column('created').execute()
}
