import type { Kysely } from 'kysely'
import type { OrderKeysTable, PaymentDatabase, PaymentOrdersTable } from '../db/schema.ts'

export type OrderRow = PaymentOrdersTable
export type OrderKeyRow = OrderKeysTable

/** Payment orders and their Idempotency-Keys; all SQL of both tables. */
export function createOrdersRepository(db: Kysely<PaymentDatabase>) {
  return {
    async insert(row: OrderRow): Promise<void> {
      await db.insertInto('payment_orders').values(row).execute()
    },

    find(id: number): Promise<OrderRow | undefined> {
      return db.selectFrom('payment_orders').selectAll().where('timetick', '=', id).executeTakeFirst()
    },

    /** A user's key if it was used at or after `notBefore`; an older one no longer counts. */
    findKey(crmId: number, key: string, notBefore: number): Promise<OrderKeyRow | undefined> {
      return db
        .selectFrom('order_keys')
        .selectAll()
        .where('crm_id', '=', crmId)
        .where('idem_key', '=', key)
        .where('created', '>=', notBefore)
        .executeTakeFirst()
    },

    /**
     * Claims a key; fails with a unique violation when the user holds it already. On PostgreSQL a
     * parallel claim of the same key waits here until the first transaction ends.
     */
    async insertKey(row: OrderKeyRow): Promise<void> {
      await db.insertInto('order_keys').values(row).execute()
    },

    /** Forgets keys used before `notBefore` (lazy pruning), so that they may be used again. */
    async pruneKeysBefore(notBefore: number): Promise<void> {
      await db.deleteFrom('order_keys').where('created', '<', notBefore).execute()
    },
  }
}

export type OrdersRepository = ReturnType<typeof createOrdersRepository>
