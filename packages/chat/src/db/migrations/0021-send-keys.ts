import { columnType as c, notNullDefault as d } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * Idempotency keys of send_message (docs/chat-api.md, "Sending once"): one row per sender and key,
 * stored in the transaction that posts the message. The primary key is what makes a key post at
 * most once when a client sends again after losing an answer (issue 22: a chat instance that dies
 * mid-send behind the gateway).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('send_keys')
    .addColumn('member', c.id, d(0))
    .addColumn('idem_key', c.text, d(''))
    .addColumn('fingerprint', c.text, d(''))
    .addColumn('message_id', c.id, d(0))
    .addColumn('response', c.json, d('{}'))
    .addColumn('created', c.time, d(0))
    .addPrimaryKeyConstraint('send_keys_pk', ['member', 'idem_key'])
    .execute()
  await db.schema.createIndex('send_keys_created').on('send_keys').column('created').execute()
}
