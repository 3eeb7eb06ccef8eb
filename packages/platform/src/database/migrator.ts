import { type Kysely, type Migration as KyselyMigration, Migrator, sql } from 'kysely'
import type { Database, DatabaseDialect } from './database.ts'

/** One forward-only schema change; `dialect` lets it differ where SQLite and PostgreSQL must. */
export interface Migration {
  // biome-ignore lint/suspicious/noExplicitAny: a migration runs against the schema as it was, not the current one
  up(db: Kysely<any>, dialect: DatabaseDialect): Promise<void>
}

/** Migrations by name; names are `NNNN-kebab-words` and run in name order. */
export type Migrations = Record<string, Migration>

const MIGRATION_NAME = /^\d{4}-[a-z0-9]+(-[a-z0-9]+)*$/

/** Where Kysely's migrator records the applied migrations (its default table). */
const MIGRATION_TABLE = 'kysely_migration'

export interface MigrateOptions {
  /**
   * Called with the applied migrations this build does not know, all newer than its own newest:
   * the database was migrated by a newer build, and this older one runs on it (a rollback;
   * migrations are expand-then-contract, docs/operations.md).
   */
  onNewerSchema?: (unknown: string[]) => void
}

/** Logs, as a warning, that an older build runs on a newer schema (the names `onNewerSchema` received). */
export function warnNewerSchema(log: { warn(details: object, message: string): void }, newer: string[]): void {
  if (newer.length === 0) return
  log.warn(
    { newerMigrations: newer },
    `the database schema is newer than this build: it has migrations ${newer.join(', ')} from a newer build; running on it (expand-then-contract, docs/operations.md)`,
  )
}

/** The names of the migrations applied to the database, in name order; none on a new database. */
export async function appliedMigrations<DB>(database: Database<DB>): Promise<string[]> {
  // On PostgreSQL the table is looked up on the search path: other schemas have their own.
  const exists =
    database.dialect === 'postgres'
      ? sql<{ found: string | null }>`select to_regclass(${MIGRATION_TABLE})::text as found`
      : sql<{
          found: string | null
        }>`select name as found from sqlite_master where type = 'table' and name = ${MIGRATION_TABLE}`
  const { rows } = await exists.execute(database.db)
  if (!rows[0]?.found) return []
  // biome-ignore lint/suspicious/noExplicitAny: the migrator's own table is not part of any module's schema
  const applied = await (database.db as Kysely<any>).selectFrom(MIGRATION_TABLE).select('name').execute()
  return applied.map((row: { name: string }) => row.name).sort()
}

/**
 * The applied migrations this build does not have. Newer ones than its newest are accepted (it is
 * an older build on a newer schema); an unknown one older than its newest means the database was
 * migrated by builds of another history, and is refused.
 */
async function unknownApplied<DB>(database: Database<DB>, migrations: Migrations): Promise<string[]> {
  const unknown = (await appliedMigrations(database)).filter((name) => !Object.hasOwn(migrations, name))
  const newest = Object.keys(migrations).sort().at(-1) ?? ''
  const foreign = unknown.filter((name) => name < newest)
  if (foreign.length > 0) {
    throw new Error(
      `the database has applied migrations this build does not know that are older than its newest (${newest}): ${foreign.join(', ')}`,
    )
  }
  return unknown
}

/**
 * Applies the pending migrations in name order and returns their names. On PostgreSQL an advisory lock
 * lets several instances start at once; on SQLite the batch runs in one BEGIN IMMEDIATE transaction.
 * Migrations a newer build applied are accepted and reported to `onNewerSchema`.
 */
export async function migrateToLatest<DB>(
  database: Database<DB>,
  migrations: Migrations,
  { onNewerSchema }: MigrateOptions = {},
): Promise<string[]> {
  const invalid = Object.keys(migrations).filter((name) => !MIGRATION_NAME.test(name))
  if (invalid.length > 0) {
    throw new Error(`invalid migration names ${invalid.join(', ')}: use NNNN-kebab-words, e.g. 0001-initial`)
  }
  const provided: Record<string, KyselyMigration> = {}
  for (const [name, migration] of Object.entries(migrations)) {
    provided[name] = { up: (db) => migration.up(db, database.dialect) }
  }
  const newer = await unknownApplied(database, migrations)
  // Kysely refuses applied migrations it is not given ("corrupted migrations"): they are given as
  // already applied, so they never run.
  for (const name of newer) {
    provided[name] = {
      up: async () => {
        throw new Error(`migration ${name} belongs to a newer build`)
      },
    }
  }
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => provided },
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error !== undefined) {
    const failed = results.find((result) => result.status === 'Error')?.migrationName
    const message = error instanceof Error ? error.message : String(error)
    throw new Error(failed === undefined ? `migrations failed: ${message}` : `migration ${failed} failed: ${message}`, {
      cause: error,
    })
  }
  if (newer.length > 0) onNewerSchema?.(newer)
  return results.map((result) => result.migrationName)
}
