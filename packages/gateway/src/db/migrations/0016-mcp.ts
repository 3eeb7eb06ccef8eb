import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * The MCP endpoint's whitelist (docs/mcp.md): grants of a tool to a user, an app or an API key
 * (one per subject, tool and currency), the amounts `wallet_send` moved per subject, currency and
 * UTC day (one counter row each, so a limit holds under parallel calls), the sends by idempotency
 * key (one per user and key, so a replay is counted once), and the audit of every tools/call.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mcp_grants')
    .addColumn('id', c.id, primaryKey())
    .addColumn('subject_kind', c.text, d(''))
    .addColumn('subject_id', c.id, d(0))
    .addColumn('tool', c.text, d(''))
    .addColumn('currency', c.text, d(''))
    .addColumn('per_call', c.bigInteger, d(0))
    .addColumn('per_day', c.bigInteger, d(0))
    .addColumn('created', c.time, d(0))
    .execute()
  await db.schema
    .createIndex('mcp_grants_subject_tool')
    .unique()
    .on('mcp_grants')
    .columns(['subject_kind', 'subject_id', 'tool', 'currency'])
    .execute()
  await db.schema
    .createTable('mcp_spend')
    .addColumn('subject_kind', c.text, d(''))
    .addColumn('subject_id', c.id, d(0))
    .addColumn('currency', c.text, d(''))
    .addColumn('day', c.text, d(''))
    .addColumn('spent', c.bigInteger, d(0))
    .execute()
  await db.schema
    .createIndex('mcp_spend_subject_day')
    .unique()
    .on('mcp_spend')
    .columns(['subject_kind', 'subject_id', 'currency', 'day'])
    .execute()
  await db.schema
    .createTable('mcp_sends')
    .addColumn('id', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('idempotency_key', c.text, d(''))
    .addColumn('args_digest', c.text, d(''))
    .addColumn('currency', c.text, d(''))
    .addColumn('amount', c.bigInteger, d(0))
    .addColumn('day', c.text, d(''))
    .addColumn('counted', c.json, d('[]'))
    .addColumn('created', c.time, d(0))
    .execute()
  await db.schema.createIndex('mcp_sends_key').unique().on('mcp_sends').columns(['crm_id', 'idempotency_key']).execute()
  await db.schema
    .createTable('mcp_audit')
    .addColumn('id', c.id, primaryKey())
    .addColumn('created', c.time, d(0))
    .addColumn('crm_id', c.id, d(0))
    .addColumn('app_id', c.id, d(0))
    .addColumn('key_id', c.id, d(0))
    .addColumn('key_type', c.text, d(''))
    .addColumn('tool', c.text, d(''))
    .addColumn('args_digest', c.text, d(''))
    .addColumn('outcome', c.text, d(''))
    .addColumn('error_code', c.integer, d(0))
    .addColumn('duration_ms', c.integer, d(0))
    .execute()
  await db.schema.createIndex('mcp_audit_created').on('mcp_audit').column('created').execute()
}
