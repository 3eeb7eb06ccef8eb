import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { sql } from 'kysely'
import { Client } from 'pg'
import { createDatabase, type Migrations } from '../database/index.ts'
import { forEachDialect, onlyWithPostgres, postgresTestUrl } from './databases.ts'
import { createMigratedTestDatabaseUrl } from './migrated-databases.ts'

// Migrations are told apart by their names and code, as a module's are.
const NOTES: Migrations = {
  '0001-notes': {
    async up(db) {
      await db.schema
        .createTable('notes')
        .addColumn('id', 'integer', (column) => column.primaryKey())
        .addColumn('text', 'text', (column) => column.notNull().defaultTo(''))
        .execute()
    },
  },
}
const NOTES_AND_TAGS: Migrations = {
  ...NOTES,
  '0002-tags': {
    async up(db) {
      await db.schema
        .createTable('tags')
        .addColumn('name', 'text', (column) => column.primaryKey())
        .execute()
    },
  },
}

async function tablesOf(t: TestContext, url: string): Promise<string[]> {
  const database = createDatabase(url)
  t.after(() => database.destroy())
  return (await database.db.introspection.getTables()).map((table) => table.name).sort()
}

forEachDialect(
  'a migrated test database has every migration applied, and each test gets its own',
  async (t, dialect) => {
    const first = await createMigratedTestDatabaseUrl(t, dialect, NOTES)
    const second = await createMigratedTestDatabaseUrl(t, dialect, NOTES)
    assert.notEqual(first, second)

    const a = createDatabase(first)
    const b = createDatabase(second)
    t.after(() => Promise.all([a.destroy(), b.destroy()]))
    const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(a.db)
    assert.deepEqual(
      applied.rows.map((row) => row.name),
      ['0001-notes'],
    )
    await sql`insert into notes (id, text) values (1, 'only in the first')`.execute(a.db)
    const inSecond = await sql<{ n: number }>`select count(*) as n from notes`.execute(b.db)
    assert.equal(Number(inSecond.rows[0]!.n), 0, 'the copies share nothing')
  },
)

forEachDialect('a changed set of migrations gets databases of its own', async (t, dialect) => {
  const before = await createMigratedTestDatabaseUrl(t, dialect, NOTES)
  const after = await createMigratedTestDatabaseUrl(t, dialect, NOTES_AND_TAGS)
  assert.deepEqual(await tablesOf(t, before), ['notes'])
  assert.deepEqual(await tablesOf(t, after), ['notes', 'tags'])
})

test('a SQLite copy is removed with its test', async (t) => {
  let file = ''
  await t.test('uses a copy', async (inner) => {
    const url = await createMigratedTestDatabaseUrl(inner, 'sqlite', NOTES)
    file = url.slice('sqlite:'.length)
    assert.ok(existsSync(file))
  })
  assert.equal(existsSync(file), false)
})

/** The schema a PostgreSQL test database URL names. */
const schemaOf = (url: string) => new URL(url).searchParams.get('schema')!

async function exists(schema: string): Promise<boolean> {
  const client = new Client({ connectionString: postgresTestUrl() })
  await client.connect()
  try {
    return (await client.query('select 1 from pg_namespace where nspname = $1', [schema])).rowCount === 1
  } finally {
    await client.end()
  }
}

test(
  'a PostgreSQL schema a test used is emptied for the next, unless a test changed its tables',
  onlyWithPostgres(),
  async (t) => {
    const used: string[] = []
    const take = (name: string, use: (url: string) => Promise<void>) =>
      t.test(name, async (inner) => {
        const url = await createMigratedTestDatabaseUrl(inner, 'postgres', NOTES)
        used.push(schemaOf(url))
        const database = createDatabase(url)
        inner.after(() => database.destroy())
        await use(url)
      })
    const count = async (url: string) => {
      const database = createDatabase(url)
      try {
        return Number((await sql<{ n: number }>`select count(*) as n from notes`.execute(database.db)).rows[0]!.n)
      } finally {
        await database.destroy()
      }
    }
    await take('writes a note', async (url) => {
      const database = createDatabase(url)
      await sql`insert into notes (id, text) values (1, 'left behind')`.execute(database.db)
      await database.destroy()
    })
    await take('finds no note', async (url) => assert.equal(await count(url), 0))
    await take('drops the table', async (url) => {
      const database = createDatabase(url)
      await sql`drop table notes`.execute(database.db)
      await database.destroy()
    })
    await take('has the table again', async (url) => assert.equal(await count(url), 0))
    assert.equal(used[1], used[0], 'the emptied schema is used again')
    assert.equal(used[2], used[0])
    assert.notEqual(used[3], used[2], 'a schema whose tables changed is not used again')
    assert.equal(await exists(used[2]!), false, 'it is dropped')
  },
)

test('the schemas a test process made are dropped when its tests end', onlyWithPostgres(), async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-migrated-'))
  t.after(() => rm(directory, { recursive: true, force: true }))
  const file = join(directory, 'uses-schemas.test.ts')
  const helper = new URL('./migrated-databases.ts', import.meta.url).href
  await writeFile(
    file,
    `import test from 'node:test'
    import { createMigratedTestDatabaseUrl } from ${JSON.stringify(helper)}
    const NONE = { '0001-none': { async up() {} } }
    for (const name of ['first', 'second']) {
      test(name, async (t) => {
        const url = await createMigratedTestDatabaseUrl(t, 'postgres', NONE)
        console.log('schema=' + new URL(url).searchParams.get('schema'))
      })
    }
    `,
  )
  // Without this runner's NODE_TEST_CONTEXT, the inner run is a test run of its own.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env
  const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', file], { env, encoding: 'utf8' })
  assert.equal(run.status, 0, run.stdout + run.stderr)
  const schemas = [...run.stdout.matchAll(/schema=(test_[0-9a-f]{16})/g)].map((match) => match[1]!)
  assert.equal(schemas.length, 2, run.stdout)
  assert.equal(schemas[0], schemas[1], 'the second test reused the first one’s schema')
  assert.equal(await exists(schemas[0]!), false)
})
