import { columnType as c, notNullDefault as d } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * Idempotency keys of POST /wallet/v1/send: one row per sender and key, stored in the transfer's
 * own transaction. The primary key is what makes a key pay at most once (docs/wallet.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('crm_id', c.id, d(0))
    .addColumn('idem_key', c.text, d(''))
    .addColumn('fingerprint', c.text, d(''))
    .addColumn('tx_id', c.id, d(0))
    .addColumn('response', c.json, d('{}'))
    .addColumn('created', c.time, d(0))
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['crm_id', 'idem_key'])
    .execute()
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created').execute()
}
