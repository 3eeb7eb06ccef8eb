import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, type TestOptions, test } from 'node:test'
import { sql } from 'kysely'
import { Client, escapeIdentifier } from 'pg'
import { createDatabase, type Database, type DatabaseDialect } from '../database/index.ts'
import { closeTestServers } from './teardown.ts'

const POSTGRES_SKIPPED = 'DATABASE_URL not set: PostgreSQL run skipped'
const POSTGRES_REQUIRED = 'DATABASE_URL names no PostgreSQL server; ATRIUM_REQUIRE_POSTGRES=1 requires one'

/** The PostgreSQL server tests may use (`DATABASE_URL` when it starts with postgres:), or undefined. */
export function postgresTestUrl(): string | undefined {
  const url = process.env.DATABASE_URL
  return url?.startsWith('postgres:') || url?.startsWith('postgresql:') ? url : undefined
}

/**
 * True when `ATRIUM_REQUIRE_POSTGRES=1` (set by CI): a PostgreSQL run that would be skipped fails
 * instead, so a missing or mistyped `DATABASE_URL` cannot pass as a green run on SQLite alone.
 */
export function postgresRequired(): boolean {
  return process.env.ATRIUM_REQUIRE_POSTGRES === '1'
}

/**
 * Test options that skip a PostgreSQL-only test, with the reason, when `DATABASE_URL` names no
 * PostgreSQL server; under `ATRIUM_REQUIRE_POSTGRES=1` the test runs and fails when it asks for a database.
 */
export function onlyWithPostgres(): TestOptions {
  if (postgresTestUrl() !== undefined || postgresRequired()) return { skip: false }
  return { skip: POSTGRES_SKIPPED }
}

/**
 * Registers one test per dialect, named `<name> (sqlite)` and `<name> (postgres)`; the PostgreSQL one
 * is registered as skipped when `DATABASE_URL` names no PostgreSQL server, or fails under
 * `ATRIUM_REQUIRE_POSTGRES=1`.
 */
export function forEachDialect(
  name: string,
  fn: (t: TestContext, dialect: DatabaseDialect) => Promise<void> | void,
): void {
  test(`${name} (sqlite)`, (t) => fn(t, 'sqlite'))
  test(`${name} (postgres)`, onlyWithPostgres(), (t) => {
    // Fails before the body, which might never ask for a database and so pass without one.
    if (postgresTestUrl() === undefined) throw new Error(POSTGRES_REQUIRED)
    return fn(t, 'postgres')
  })
}

/**
 * A fresh, empty database for one test, removed after it: a temporary SQLite file, or a new PostgreSQL
 * schema (selected with `?schema=`) so that tests can run in parallel on one server.
 */
export async function createTestDatabaseUrl(t: TestContext, dialect: DatabaseDialect): Promise<string> {
  const { url, remove } = await provisionTestDatabase(dialect)
  // The servers on it close first, whatever order their hooks were added in (teardown.ts).
  t.after(async () => {
    await closeTestServers(t)
    await remove()
  })
  return url
}

/** Opens a fresh database for one test (see `createTestDatabaseUrl`), destroyed and removed after it. */
export async function openTestDatabase<DB>(t: TestContext, dialect: DatabaseDialect): Promise<Database<DB>> {
  const { url, remove } = await provisionTestDatabase(dialect)
  const database = createDatabase<DB>(url)
  t.after(async () => {
    await database.destroy()
    await remove()
  })
  return database
}

/** Lists `table.column` for every nullable column of the database's tables, for "no NULL fields" assertions. */
export async function listNullableColumns<DB>(database: Database<DB>): Promise<string[]> {
  const rows =
    database.dialect === 'sqlite'
      ? // pragma_table_list types FTS5 and other virtual tables 'virtual' and their storage 'shadow': both are skipped.
        await sql<{ table: string; column: string }>`
          select t.name as "table", c.name as "column"
          from pragma_table_list as t, pragma_table_info(t.name) as c
          where t.schema = 'main' and t.type = 'table'
            and t.name not like 'sqlite\\_%' escape '\\' and t.name not like 'kysely\\_%' escape '\\'
            and c."notnull" = 0
            and not (c.pk = 1 and upper(c.type) = 'INTEGER'
              and (select count(*) from pragma_table_info(t.name) where pk > 0) = 1)
          order by 1, 2`.execute(database.db)
      : await sql<{ table: string; column: string }>`
          select c.table_name as "table", c.column_name as "column"
          from information_schema.columns as c
          join information_schema.tables as t
            on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
          where c.table_schema = current_schema() and c.is_nullable = 'YES'
            and c.table_name not like 'kysely\\_migration%'
          order by 1, 2`.execute(database.db)
  return rows.rows.map((row) => `${row.table}.${row.column}`)
}

interface TestDatabase {
  url: string
  remove(): Promise<void>
}

async function provisionTestDatabase(dialect: DatabaseDialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const directory = await mkdtemp(join(tmpdir(), 'atrium-test-'))
    return {
      url: `sqlite:${join(directory, 'test.db')}`,
      // Retried: a SQLite checkpoint thread (database/sqlite-checkpoints.ts) of a database the test
      // has not closed yet may write the file's log while the directory is removed.
      remove: () => rm(directory, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }),
    }
  }
  const schema = `test_${randomBytes(8).toString('hex')}`
  await onTestServer((client) => client.query(`create schema ${escapeIdentifier(schema)}`))
  return {
    url: testSchemaUrl(schema),
    remove: async () => {
      await onTestServer((client) => client.query(`drop schema if exists ${escapeIdentifier(schema)} cascade`))
    },
  }
}

/**
 * Runs `run` with a client of the PostgreSQL test server (`DATABASE_URL` without its schema),
 * ended afterwards; fails with the reason when there is none.
 */
export async function onTestServer<T>(run: (client: Client) => Promise<T>): Promise<T> {
  const url = postgresTestUrl()
  if (url === undefined) throw new Error(postgresRequired() ? POSTGRES_REQUIRED : POSTGRES_SKIPPED)
  const server = new URL(url)
  server.searchParams.delete('schema')
  const client = new Client({ connectionString: server.toString() })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

/** The URL of a schema of the PostgreSQL test server. */
export function testSchemaUrl(schema: string): string {
  const url = new URL(postgresTestUrl()!)
  url.searchParams.set('schema', schema)
  return url.toString()
}
