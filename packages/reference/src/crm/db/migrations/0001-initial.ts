import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/** Profiles and their contacts. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('profiles')
    .addColumn('crm_id', c.id, primaryKey())
    .addColumn('name', c.text, d(''))
    .addColumn('created', c.time, d(0))
    .addColumn('timetick_update', c.id, d(0))
    .execute()
  await db.schema.createIndex('profiles_update').on('profiles').column('timetick_update').execute()

  await db.schema
    .createTable('contacts')
    .addColumn('crm_id', c.id, d(0))
    .addColumn('kind', c.text, d(''))
    .addColumn('value', c.text, d(''))
    .addColumn('verified', c.bool, d(false))
    .addPrimaryKeyConstraint('contacts_pk', ['crm_id', 'kind', 'value'])
    .execute()
}
