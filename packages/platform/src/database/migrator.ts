import { type Kysely, type Migration as KyselyMigration, Migrator } from 'kysely'
import type { Database, DatabaseDialect } from './database.ts'

/** One forward-only schema change; `dialect` lets it differ where SQLite and PostgreSQL must. */
export interface Migration {
  // biome-ignore lint/suspicious/noExplicitAny: a migration runs against the schema as it was, not the current one
  up(db: Kysely<any>, dialect: DatabaseDialect): Promise<void>
}

/** Migrations by name; names are `NNNN-kebab-words` and run in name order. */
export type Migrations = Record<string, Migration>

const MIGRATION_NAME = /^\d{4}-[a-z0-9]+(-[a-z0-9]+)*$/

/**
 * Applies the pending migrations in name order and returns their names. On PostgreSQL an advisory lock
 * lets several instances start at once; on SQLite the batch runs in one BEGIN IMMEDIATE transaction.
 */
export async function migrateToLatest<DB>(database: Database<DB>, migrations: Migrations): Promise<string[]> {
  const invalid = Object.keys(migrations).filter((name) => !MIGRATION_NAME.test(name))
  if (invalid.length > 0) {
    throw new Error(`invalid migration names ${invalid.join(', ')}: use NNNN-kebab-words, e.g. 0001-initial`)
  }
  const provided: Record<string, KyselyMigration> = {}
  for (const [name, migration] of Object.entries(migrations)) {
    provided[name] = { up: (db) => migration.up(db, database.dialect) }
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
  return results.map((result) => result.migrationName)
}
