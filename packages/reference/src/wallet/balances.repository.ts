import type { Kysely } from 'kysely'
import type { BalancesTable, WalletDatabase } from './db/schema.ts'

export type BalanceRow = BalancesTable

/** The wallets of users, one row per user and currency; a missing row is an empty wallet. */
export function createBalancesRepository(db: Kysely<WalletDatabase>) {
  return {
    /** The wallet of a user in a currency; an empty one when it was never used. */
    async find(crmId: number, currency: string): Promise<BalanceRow> {
      const row = await db
        .selectFrom('balances')
        .selectAll()
        .where('crm_id', '=', crmId)
        .where('currency', '=', currency)
        .executeTakeFirst()
      return row ?? { crm_id: crmId, currency, balance: 0, hold: 0, timetick_update: 0 }
    },

    /** Every wallet of a user, by currency. */
    listFor(crmId: number): Promise<BalanceRow[]> {
      return db.selectFrom('balances').selectAll().where('crm_id', '=', crmId).orderBy('currency').execute()
    },

    /** Stores a wallet's new balance and hold. */
    async save(row: BalanceRow): Promise<void> {
      await db
        .insertInto('balances')
        .values(row)
        .onConflict((conflict) =>
          conflict.columns(['crm_id', 'currency']).doUpdateSet({
            balance: row.balance,
            hold: row.hold,
            timetick_update: row.timetick_update,
          }),
        )
        .execute()
    },
  }
}

export type BalancesRepository = ReturnType<typeof createBalancesRepository>
