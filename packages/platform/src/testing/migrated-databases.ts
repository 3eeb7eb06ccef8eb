import { createHash, randomBytes } from 'node:crypto'
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, type TestContext } from 'node:test'
import { escapeIdentifier } from 'pg'
import { createDatabase, type DatabaseDialect, type Migrations, migrateToLatest } from '../database/index.ts'
import { createTestDatabaseUrl, onTestServer, testSchemaUrl } from './databases.ts'
import { closeTestServers } from './teardown.ts'

/**
 * Whether this process runs under `node --test`, whose root test's after-hook drops the schemas
 * kept for reuse; a test file run on its own (or a benchmark) makes and drops one per use instead.
 */
const UNDER_TEST_RUNNER = process.env.NODE_TEST_CONTEXT !== undefined

/** This process's migrated SQLite files, by migrations. */
const sqliteTemplates = new Map<string, Promise<string>>()
/** This process's migrated PostgreSQL schemas that no test uses now, by migrations. */
const idleSchemas = new Map<string, string[]>()
/** Every PostgreSQL schema this process made, for the drop at the end. */
const madeSchemas = new Set<string>()
/** The tables of each migration set whose rows a reused schema loses, by migrations. */
const tablesToEmpty = new Map<string, string[]>()

if (UNDER_TEST_RUNNER) after(dropMadeSchemas)

/** Names a set of migrations by their names and code, so no copy is reused by migrations that changed. */
function migrationsKey(migrations: Migrations): string {
  const hash = createHash('sha256')
  for (const name of Object.keys(migrations).sort()) hash.update(`${name}\n${migrations[name]!.up.toString()}\n`)
  return hash.digest('hex').slice(0, 20)
}

async function migrate(url: string, migrations: Migrations): Promise<void> {
  const database = createDatabase(url)
  try {
    await migrateToLatest(database, migrations)
  } finally {
    await database.destroy()
  }
}

/** A SQLite file with the migrations applied, made once per process and copied for each test. */
async function sqliteTemplate(migrations: Migrations): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-template-'))
  process.once('exit', () => rm(directory, { recursive: true, force: true }))
  const file = join(directory, 'template.db')
  // Closing the only connection checkpoints the write-ahead log into the file, so the file alone is whole.
  await migrate(`sqlite:${file}`, migrations)
  return file
}

/**
 * Empties a schema that an earlier test of this process used (its servers were closed in that
 * test's teardown, and a file's tests run one after the other): every table's rows go, in one
 * transaction with foreign keys not enforced; the migrations' record stays. False, and nothing
 * emptied, when the schema is no longer as the migrations left it (a test changed its tables or
 * its record of migrations): it is dropped instead.
 */
async function emptySchema(schema: string, migrations: Migrations, tables: string[]): Promise<boolean> {
  return onTestServer(async (client) => {
    const quoted = escapeIdentifier(schema)
    const { rows } = await client.query<{ tables: string; applied: string }>(
      `select coalesce((select string_agg(tablename, ',' order by tablename) from pg_tables
                where schemaname = $1 and tablename not like 'kysely\\_%'), '') as tables,
              coalesce((select string_agg(name, ',' order by name) from ${quoted}.kysely_migration), '') as applied`,
      [schema],
    )
    const expected = { tables: [...tables].sort().join(','), applied: Object.keys(migrations).sort().join(',') }
    if (rows[0]?.tables !== expected.tables || rows[0]?.applied !== expected.applied) {
      madeSchemas.delete(schema)
      await client.query(`drop schema if exists ${quoted} cascade`)
      return false
    }
    const deletes = tables.map((table) => `delete from ${quoted}.${escapeIdentifier(table)};`)
    await client.query(`begin; set local session_replication_role = replica; ${deletes.join(' ')} commit`)
    return true
  })
}

/** The tables of a freshly migrated schema, whose rows a reuse empties. */
async function tablesOf(schema: string): Promise<string[]> {
  return onTestServer(async (client) => {
    const { rows } = await client.query<{ name: string }>(
      "select tablename as name from pg_tables where schemaname = $1 and tablename not like 'kysely\\_%'",
      [schema],
    )
    return rows.map((row) => row.name)
  })
}

/** A migrated PostgreSQL schema for one test: an idle one of this process emptied, else a new one migrated. */
async function takeSchema(t: Pick<TestContext, 'after'>, migrations: Migrations, key: string): Promise<string> {
  let schema = UNDER_TEST_RUNNER ? idleSchemas.get(key)?.pop() : undefined
  const tables = tablesToEmpty.get(key)
  if (schema && !(tables && (await emptySchema(schema, migrations, tables)))) schema = undefined
  if (!schema) {
    schema = `test_${randomBytes(8).toString('hex')}`
    const created = schema
    await onTestServer((client) => client.query(`create schema ${escapeIdentifier(created)}`))
    madeSchemas.add(schema)
    await migrate(testSchemaUrl(schema), migrations)
    if (!tables) tablesToEmpty.set(key, await tablesOf(schema))
  }
  const taken = schema
  t.after(async () => {
    await closeTestServers(t)
    if (UNDER_TEST_RUNNER) {
      idleSchemas.set(key, [...(idleSchemas.get(key) ?? []), taken])
    } else {
      madeSchemas.delete(taken)
      await onTestServer((client) => client.query(`drop schema if exists ${escapeIdentifier(taken)} cascade`))
    }
  })
  return taken
}

async function dropMadeSchemas(): Promise<void> {
  if (madeSchemas.size === 0) return
  const schemas = [...madeSchemas]
  madeSchemas.clear()
  await onTestServer((client) =>
    client.query(`drop schema if exists ${schemas.map((schema) => escapeIdentifier(schema)).join(', ')} cascade`),
  )
}

/**
 * A fresh database for one test with a module's migrations already applied, as the module finds
 * it after its first start: on SQLite a copy of a file migrated once per process; on PostgreSQL a
 * schema of this process that an earlier test used, emptied of its rows, or a new one migrated.
 * So a test pays a file copy or a few deletes instead of every migration. The schemas are dropped
 * when the process's tests end.
 */
export async function createMigratedTestDatabaseUrl(
  t: Pick<TestContext, 'after'>,
  dialect: DatabaseDialect,
  migrations: Migrations,
): Promise<string> {
  const key = migrationsKey(migrations)
  if (dialect === 'postgres') return testSchemaUrl(await takeSchema(t, migrations, key))
  let template = sqliteTemplates.get(key)
  if (!template) {
    template = sqliteTemplate(migrations)
    sqliteTemplates.set(key, template)
    template.catch(() => sqliteTemplates.delete(key))
  }
  const url = await createTestDatabaseUrl(t as TestContext, dialect)
  await copyFile(await template, url.slice('sqlite:'.length))
  return url
}
