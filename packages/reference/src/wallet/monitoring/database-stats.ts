import { performance } from 'node:perf_hooks'
import type { Database } from '@atrium/platform'
import { sql } from 'kysely'
import type { WalletDatabase } from '../db/schema.ts'
import { TxState } from '../ledger.ts'

/** What monitoring_stats tells about the wallet database. */
export interface DatabaseStats {
  dialect: 'sqlite' | 'postgres'
  /** Wallets (one per user and currency). */
  balances: number
  transactions: { total: number; pending: number; completed: number; failed: number }
  events: number
  idempotency_keys: number
  /** SQLite: the database file's pages; PostgreSQL: the wallet tables with their indexes and TOAST. */
  size_bytes: number
  /** One `select 1` round trip, in milliseconds. */
  query_latency_ms: number
}

/** Reads the wallet database's counts, size and latency; every query is a count or a catalogue read. */
export async function readDatabaseStats(database: Database<WalletDatabase>): Promise<DatabaseStats> {
  const { db, dialect } = database
  const started = performance.now()
  await sql`select 1`.execute(db)
  const query_latency_ms = round(performance.now() - started, 3)

  const count = async (table: 'balances' | 'wallet_events' | 'idempotency_keys') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  const byState = await db
    .selectFrom('transactions')
    .select((eb) => ['state', eb.fn.countAll().as('n')])
    .groupBy('state')
    .execute()
  const inState = (state: number) => Number(byState.find((row) => row.state === state)?.n ?? 0)

  return {
    dialect,
    balances: await count('balances'),
    transactions: {
      total: byState.reduce((sum, row) => sum + Number(row.n), 0),
      pending: inState(TxState.Pending),
      completed: inState(TxState.Completed),
      failed: inState(TxState.Failed),
    },
    events: await count('wallet_events'),
    idempotency_keys: await count('idempotency_keys'),
    size_bytes: await sizeOf(database),
    query_latency_ms,
  }
}

async function sizeOf({ db, dialect }: Database<WalletDatabase>): Promise<number> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ size: number }>`
      select page_count * page_size as size from pragma_page_count(), pragma_page_size()`.execute(db)
    return Number(rows[0]?.size ?? 0)
  }
  // The wallet's own tables in its schema (the search_path), not the whole database it may share.
  const { rows } = await sql<{ size: string | number }>`
    select coalesce(sum(pg_total_relation_size(format('%I.%I', table_schema, table_name)::regclass)), 0)::bigint as size
    from information_schema.tables
    where table_schema = current_schema() and table_name in ('balances', 'transactions', 'wallet_events', 'idempotency_keys')`.execute(
    db,
  )
  return Number(rows[0]?.size ?? 0)
}

/** Rounds to a number of decimal places. */
export function round(value: number, places: number): number {
  const factor = 10 ** places
  return Math.round(value * factor) / factor
}
