import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * The operator panel (/ProxyAdmin/, docs/admin.md): every operator action with who, when, what,
 * target and outcome, newest first by id; and the login audit's indexes for the panel's filters
 * (user, IP address, country, result), each ending in the id the list pages by, so a filtered page
 * of a million rows is an index range scan.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('admin_actions')
    .addColumn('id', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('action', c.text, d(''))
    .addColumn('target', c.text, d(''))
    .addColumn('detail', c.text, d(''))
    .addColumn('outcome', c.text, d(''))
    .addColumn('at', c.time, d(0))
    .execute()
  await db.schema.createIndex('admin_actions_operator').on('admin_actions').columns(['crm_id', 'id']).execute()
  await db.schema.createIndex('login_audit_user_id').on('login_audit').columns(['crm_id', 'id']).execute()
  await db.schema.createIndex('login_audit_ip_id').on('login_audit').columns(['ip', 'id']).execute()
  await db.schema.createIndex('login_audit_country_id').on('login_audit').columns(['country', 'id']).execute()
  await db.schema.createIndex('login_audit_success_id').on('login_audit').columns(['success', 'id']).execute()
}
