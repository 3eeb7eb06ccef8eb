import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * UserKey sign-in: the Ed25519 public keys users registered (one key belongs to one user: unique),
 * and the single-use challenges a key signs to sign in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_keys')
    .addColumn('id', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('name', c.text, d(''))
    .addColumn('public_key', c.text, d(''))
    .addColumn('created', c.time, d(0))
    .addColumn('last_used', c.time, d(0))
    .execute()
  await db.schema.createIndex('user_keys_public_key').unique().on('user_keys').column('public_key').execute()
  await db.schema.createIndex('user_keys_user').on('user_keys').column('crm_id').execute()
  await db.schema
    .createTable('user_key_challenges')
    .addColumn('id', c.id, primaryKey())
    .addColumn('key_id', c.id, d(0))
    .addColumn('nonce_hash', c.text, d(''))
    .addColumn('expires', c.time, d(0))
    .addColumn('consumed', c.integer, d(0))
    .execute()
  await db.schema.createIndex('user_key_challenges_expiry').on('user_key_challenges').column('expires').execute()
}
