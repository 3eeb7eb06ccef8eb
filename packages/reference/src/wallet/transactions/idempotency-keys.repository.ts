import type { Kysely } from 'kysely'
import type { IdempotencyKeysTable, WalletDatabase } from '../db/schema.ts'

export type IdempotencyKeyRow = IdempotencyKeysTable

/** The Idempotency-Keys of transfers, one per sender and key (the table's primary key). */
export function createIdempotencyKeysRepository(db: Kysely<WalletDatabase>) {
  return {
    /** The sender's key if it was used at or after `notBefore`; an older one no longer counts. */
    find(crmId: number, key: string, notBefore: number): Promise<IdempotencyKeyRow | undefined> {
      return db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('crm_id', '=', crmId)
        .where('idem_key', '=', key)
        .where('created', '>=', notBefore)
        .executeTakeFirst()
    },

    /** Stores a key; fails with a unique violation when the sender already holds it. */
    async insert(row: IdempotencyKeyRow): Promise<void> {
      await db.insertInto('idempotency_keys').values(row).execute()
    },

    /** Forgets keys used before `notBefore` (lazy pruning), so that they may be used again. */
    async pruneBefore(notBefore: number): Promise<void> {
      await db.deleteFrom('idempotency_keys').where('created', '<', notBefore).execute()
    },
  }
}
