import type { Database, TimetickGenerator } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { createBalancesRepository } from './balances.repository.ts'
import type { WalletDatabase } from './db/schema.ts'
import { createEventFeed, type EventFeed, type WalletEventInput } from './events/event-feed.ts'
import { createIdempotencyKeysRepository } from './transactions/idempotency-keys.repository.ts'
import { createTransactionsRepository } from './transactions/transactions.repository.ts'

/** A fixed key for pg_advisory_xact_lock: one wallet write transaction at a time across every instance. */
export const WALLET_WRITE_LOCK = 7_310_225_002

function repositories(db: Kysely<WalletDatabase>) {
  return {
    balances: createBalancesRepository(db),
    transactions: createTransactionsRepository(db),
    idempotencyKeys: createIdempotencyKeysRepository(db),
  }
}

/** The repositories of one write transaction, plus new ids and recording events in it. */
export type Unit = ReturnType<typeof repositories> & {
  nextTick: TimetickGenerator
  emit(event: WalletEventInput): Promise<number>
}

/**
 * The wallet's data access: repositories over the pool for reads, and `transact` for writes. Every
 * write transaction holds the wallet write lock from its start to its commit (see event-feed.ts),
 * so balance checks and updates never race and event cursors commit in order. Events recorded in
 * a transaction are readable when `transact` returns, before the operation answers.
 */
export function createWalletStore(database: Database<WalletDatabase>, nextTick: TimetickGenerator) {
  const events: EventFeed = createEventFeed(database, nextTick)

  async function transact<T>(work: (unit: Unit) => Promise<T>): Promise<T> {
    let recorded = false
    const result = await database.db.transaction().execute(async (trx) => {
      // SQLite: BEGIN IMMEDIATE already holds the database's one write lock.
      if (database.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(${WALLET_WRITE_LOCK}::bigint)`.execute(trx)
      }
      return work({
        ...repositories(trx),
        nextTick,
        emit(event) {
          recorded = true
          return events.append(trx, event)
        },
      })
    })
    if (recorded) events.committed()
    return result
  }

  return { ...repositories(database.db), events, transact }
}

export type WalletStore = ReturnType<typeof createWalletStore>
