import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { type Generated, type Kysely, sql } from 'kysely'
import { createTestDatabaseUrl, forEachDialect, onlyWithPostgres, openTestDatabase } from '../testing/databases.ts'
import { until } from '../testing/until.ts'
import { columnType, notNullDefault, primaryKey, readBool, writeBool } from './columns.ts'
import { createDatabase } from './database.ts'

interface TestDB {
  record: {
    id: number
    active: Generated<number>
    created: Generated<number>
    title: Generated<string>
    score: Generated<number>
    data: Generated<string>
  }
}

async function createRecords(db: Kysely<TestDB>): Promise<void> {
  await db.schema
    .createTable('record')
    .addColumn('id', columnType.id, primaryKey())
    .addColumn('active', columnType.bool, notNullDefault(false))
    .addColumn('created', columnType.time, notNullDefault(0))
    .addColumn('title', columnType.text, notNullDefault(''))
    .addColumn('score', columnType.double, notNullDefault(0))
    .addColumn('data', columnType.json, notNullDefault('{}'))
    .execute()
}

forEachDialect('ids, booleans, times, unicode text, doubles and JSON read back as written', async (t, dialect) => {
  const { db } = await openTestDatabase<TestDB>(t, dialect)
  await createRecords(db)
  const written = {
    id: Number.MAX_SAFE_INTEGER,
    active: writeBool(true),
    created: Date.UTC(2026, 10, 22, 12, 30, 15, 123),
    title: 'Grüße 👋🏽 日本語 \t\n "quoted" \u2028 end',
    score: 0.1 + 0.2,
    data: JSON.stringify({ nested: [1, 'two'] }),
  }
  await db.insertInto('record').values(written).execute()
  await db.insertInto('record').values({ id: 1 }).execute()
  const rows = await db.selectFrom('record').selectAll().orderBy('id').execute()
  assert.deepStrictEqual(rows, [{ id: 1, active: 0, created: 0, title: '', score: 0, data: '{}' }, written])
  assert.equal(readBool(rows[1]!.active), true)
  const { count } = await db
    .selectFrom('record')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow()
  assert.equal(count, 2)
})

forEachDialect('a transaction commits, and rolls back when its callback throws', async (t, dialect) => {
  const { db } = await openTestDatabase<TestDB>(t, dialect)
  await createRecords(db)
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('record').values({ id: 1 }).execute()
    await trx.insertInto('record').values({ id: 2 }).execute()
  })
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      await trx.insertInto('record').values({ id: 3 }).execute()
      await trx.insertInto('record').values({ id: 1 }).execute()
    }),
  )
  const ids = await db.selectFrom('record').select('id').orderBy('id').execute()
  assert.deepEqual(
    ids.map((row) => row.id),
    [1, 2],
  )
})

test('SQLite opens in WAL mode with synchronous=NORMAL, foreign keys and a busy timeout', async (t) => {
  const { db } = await openTestDatabase(t, 'sqlite')
  const pragma = async (name: string) =>
    Object.values((await sql.raw<Record<string, unknown>>(`pragma ${name}`).execute(db)).rows[0] ?? {})[0]
  assert.equal(await pragma('journal_mode'), 'wal')
  assert.equal(await pragma('synchronous'), 1)
  assert.equal(await pragma('foreign_keys'), 1)
  assert.equal(await pragma('busy_timeout'), 5000)
  await sql`create table parent (id integer primary key)`.execute(db)
  await sql`create table child (parent integer not null references parent (id))`.execute(db)
  await assert.rejects(sql`insert into child (parent) values (1)`.execute(db), /FOREIGN KEY constraint failed/)
})

test('a relative SQLite path is created with its parent directories, and :memory: works', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-db-'))
  t.after(() => rm(directory, { recursive: true, force: true }))
  const file = join(directory, 'nested', 'deeper', 'app.db')
  const database = createDatabase(`sqlite:${relative(process.cwd(), file)}`)
  await sql`create table t (x integer not null)`.execute(database.db)
  await database.destroy()
  assert.ok(existsSync(file))

  const memory = createDatabase('sqlite::memory:')
  const { rows } = await sql<{ answer: number }>`select 6 * 7 as answer`.execute(memory.db)
  assert.deepEqual(rows, [{ answer: 42 }])
  await memory.destroy()
})

test('destroying a database that never ran a query closes it', async (t) => {
  const url = await createTestDatabaseUrl(t, 'sqlite')
  await createDatabase(url).destroy()
})

test('an unsupported or malformed URL throws an error naming the accepted forms', () => {
  assert.throws(
    () => createDatabase('mysql://root:secret@localhost/db'),
    (error: Error) => {
      assert.match(error.message, /unsupported database URL \(mysql:\)/)
      assert.match(error.message, /sqlite:<path>.*sqlite::memory:.*postgres:\/\//)
      assert.doesNotMatch(error.message, /secret/)
      return true
    },
  )
  assert.throws(() => createDatabase('./data/chat.db'), /unsupported database URL \(no scheme\)/)
  assert.throws(() => createDatabase('sqlite:'), /invalid SQLite database URL: use sqlite:<path>/)
  assert.throws(() => createDatabase('sqlite://data/chat.db'), /invalid SQLite database URL/)
  assert.throws(() => createDatabase('postgres://localhost/test?schema=Bad-Name'), /invalid schema in database URL/)
  for (const bad of ['0', '1001', '2.5', 'ten', '', '-3']) {
    assert.throws(
      () => createDatabase(`postgres://localhost/test?pool_max=${bad}`),
      /invalid pool_max in database URL: .* must be a whole number from 1 to 1000/,
      bad,
    )
  }
})

test('PostgreSQL ?pool_max= caps the pool: queries past it wait for a connection', onlyWithPostgres(), async (t) => {
  const url = new URL(await createTestDatabaseUrl(t, 'postgres'))
  url.searchParams.set('pool_max', '2')
  const database = createDatabase(url.toString())
  t.after(() => database.destroy())
  const queries = Array.from({ length: 5 }, (_, index) =>
    sql<{ n: number }>`select ${index}::int as n, pg_sleep(0.2)`.execute(database.db),
  )
  await until(() => (database.poolStats()?.waiting ?? 0) > 0, 'a query waiting for a connection')
  assert.equal(database.poolStats()?.total, 2)
  const rows = await Promise.all(queries)
  assert.deepEqual(
    rows.map(({ rows }) => rows[0]?.n),
    [0, 1, 2, 3, 4],
  )
  assert.equal(database.poolStats()?.total, 2)
})

test('PostgreSQL int8 and numeric results beyond Number.MAX_SAFE_INTEGER throw', onlyWithPostgres(), async (t) => {
  const { db } = await openTestDatabase(t, 'postgres')
  const one = async (query: string) => (await sql.raw<{ v: unknown }>(query).execute(db)).rows[0]?.v
  assert.equal(await one(`select ${Number.MAX_SAFE_INTEGER}::int8 as v`), Number.MAX_SAFE_INTEGER)
  assert.equal(await one(`select -${Number.MAX_SAFE_INTEGER}::int8 as v`), -Number.MAX_SAFE_INTEGER)
  assert.deepEqual(await one('select array[1, null, 3]::int8[] as v'), [1, null, 3])
  assert.equal(await one('select sum(x) as v from (values (1::int8), (2::int8)) as s (x)'), 3)
  assert.equal(await one('select 2.5::numeric as v'), 2.5)
  await assert.rejects(one('select 9007199254740992::int8 as v'), /int8 value 9007199254740992 is beyond/)
  await assert.rejects(one('select 99999999999999999999::numeric as v'), /numeric value .* is beyond/)
  assert.equal(await one('select 1 as v'), 1)
})

test(
  'PostgreSQL ?schema= sets search_path on every pooled connection and isolates tables',
  onlyWithPostgres(),
  async (t) => {
    const first = await openTestDatabase(t, 'postgres')
    const second = await openTestDatabase(t, 'postgres')
    const firstSchema = new URL(first.url).searchParams.get('schema')
    await sql`create table note (body text not null)`.execute(first.db)
    await sql`create table note (body text not null)`.execute(second.db)
    await sql`insert into note (body) values ('first')`.execute(first.db)
    // Concurrent sleeps force several pooled connections; each must see the schema.
    const schemas = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const { rows } = await sql<{ schema: string }>`select current_schema() as schema, pg_sleep(0.05)`.execute(
          first.db,
        )
        return rows[0]?.schema
      }),
    )
    assert.deepEqual(schemas, [firstSchema, firstSchema, firstSchema, firstSchema])
    const { rows } = await sql<{ body: string }>`select body from note`.execute(second.db)
    assert.deepEqual(rows, [])
    const tables = await first.db.introspection.getTables()
    assert.deepEqual(
      tables.map((table) => `${table.schema}.${table.name}`),
      [`${firstSchema}.note`],
    )
  },
)
