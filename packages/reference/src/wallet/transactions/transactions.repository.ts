import type { Kysely } from 'kysely'
import type { TransactionsTable, WalletDatabase } from '../db/schema.ts'

export type TransactionRow = TransactionsTable

export interface ListOptions {
  /** Only this currency; empty for all. */
  currency: string
  /** Cursor: only transactions older than this id; 0 for the newest. */
  before: number
  limit: number
}

/** Wallet transactions; a user's are those debiting (from_crm) or crediting (to_crm) their wallet. */
export function createTransactionsRepository(db: Kysely<WalletDatabase>) {
  return {
    async insert(row: TransactionRow): Promise<void> {
      await db.insertInto('transactions').values(row).execute()
    },

    find(id: number): Promise<TransactionRow | undefined> {
      return db.selectFrom('transactions').selectAll().where('timetick', '=', id).executeTakeFirst()
    },

    async setState(id: number, state: number, tick: number): Promise<void> {
      await db.updateTable('transactions').set({ state, timetick_update: tick }).where('timetick', '=', id).execute()
    },

    /** A user's transactions, newest first. */
    listFor(crmId: number, { currency, before, limit }: ListOptions): Promise<TransactionRow[]> {
      let query = db
        .selectFrom('transactions')
        .selectAll()
        .where((eb) => eb.or([eb('from_crm', '=', crmId), eb('to_crm', '=', crmId)]))
        .orderBy('timetick', 'desc')
        .limit(limit)
      if (currency !== '') query = query.where('currency', '=', currency)
      if (before > 0) query = query.where('timetick', '<', before)
      return query.execute()
    },
  }
}

export type TransactionsRepository = ReturnType<typeof createTransactionsRepository>
