import type { Database, TimetickGenerator } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import type { CrmDatabase } from './db/schema.ts'
import { createProfilesRepository } from './profiles/profiles.repository.ts'

/** A fixed key for pg_advisory_xact_lock: one CRM write transaction at a time across every instance. */
export const CRM_WRITE_LOCK = 7_310_225_003

function repositories(db: Kysely<CrmDatabase>) {
  return { profiles: createProfilesRepository(db) }
}

/** The repositories of one write transaction. */
export type Unit = ReturnType<typeof repositories>

/**
 * The CRM's data access: repositories over the pool for reads, and `transact` for writes. Every
 * write transaction holds the CRM write lock from its start to its commit, so two batches naming
 * the same person never interleave their read-compare-write (profile sync is rare and batched).
 */
export function createCrmStore(database: Database<CrmDatabase>, nextTick: TimetickGenerator) {
  async function transact<T>(work: (unit: Unit) => Promise<T>): Promise<T> {
    return database.db.transaction().execute(async (trx) => {
      // SQLite: BEGIN IMMEDIATE already holds the database's one write lock.
      if (database.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(${CRM_WRITE_LOCK}::bigint)`.execute(trx)
      }
      return work(repositories(trx))
    })
  }

  return { ...repositories(database.db), nextTick, transact }
}

export type CrmStore = ReturnType<typeof createCrmStore>
