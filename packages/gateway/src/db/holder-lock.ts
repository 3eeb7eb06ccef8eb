import type { DatabaseDialect } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import type { GatewayDatabase } from './schema.ts'

/**
 * Serializes the transactions that enforce a per-holder cap (sessions per user or app, push
 * subscriptions per user), so the cap holds under parallel requests and several gateways on one
 * database. Call it first in the transaction, before the rows are read.
 *
 * Without it, PostgreSQL (READ COMMITTED) lets two transactions each insert a row and each count
 * only its own plus the committed ones, so both keep theirs and the holder ends above the cap
 * (issue 14, item 16). pg_advisory_xact_lock on a hash of the holder makes the second wait until
 * the first commits; its next statement takes a new snapshot that sees the first one's row, so
 * its trim counts every row. The lock is released at commit or rollback. A hash collision between
 * two holders only makes them wait for each other. No row needs to exist (an app holder has no
 * user row to `select … for update`).
 *
 * SQLite needs nothing: the gateway's transactions begin IMMEDIATE, holding the database's one
 * write lock from the start, so read-then-write inside one is already serialized, across
 * processes too.
 */
export async function lockHolder(trx: Kysely<GatewayDatabase>, dialect: DatabaseDialect, holder: string) {
  if (dialect !== 'postgres') return
  await sql`select pg_advisory_xact_lock(hashtextextended(${holder}, 0))`.execute(trx)
}
