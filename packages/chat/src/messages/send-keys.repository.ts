import type { Kysely } from 'kysely'
import type { ChatDatabase, SendKeysTable } from '../db/schema.ts'

export type SendKeyRow = SendKeysTable

/** The Idempotency-Keys of send_message, one per sender and key (the table's primary key). */
export function createSendKeysRepository(db: Kysely<ChatDatabase>) {
  return {
    /** The sender's key if it was used at or after `notBefore`; an older one no longer counts. */
    find(member: number, key: string, notBefore: number): Promise<SendKeyRow | undefined> {
      return db
        .selectFrom('send_keys')
        .selectAll()
        .where('member', '=', member)
        .where('idem_key', '=', key)
        .where('created', '>=', notBefore)
        .executeTakeFirst()
    },

    /** Stores a key; fails with a unique violation when the sender holds it already. */
    async insert(row: SendKeyRow): Promise<void> {
      await db.insertInto('send_keys').values(row).execute()
    },

    /** Forgets the sender's key if it was used before `notBefore`, so that it may be used again. */
    async forgetExpired(member: number, key: string, notBefore: number): Promise<void> {
      await db
        .deleteFrom('send_keys')
        .where('member', '=', member)
        .where('idem_key', '=', key)
        .where('created', '<', notBefore)
        .execute()
    },

    /** Forgets every key used before `notBefore`. */
    async pruneBefore(notBefore: number): Promise<void> {
      await db.deleteFrom('send_keys').where('created', '<', notBefore).execute()
    },
  }
}
