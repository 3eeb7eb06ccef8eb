import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { type TestContext, test } from 'node:test'
import { Kysely, sql } from 'kysely'
import { createNodeSqliteDialect } from './node-sqlite-dialect.ts'

interface TestDB {
  item: { id: number; flag: number; name: string }
}

function openMemory(t: TestContext): Kysely<TestDB> {
  const db = new Kysely<TestDB>({ dialect: createNodeSqliteDialect(new DatabaseSync(':memory:')) })
  t.after(() => db.destroy())
  return db
}

async function createItems(db: Kysely<TestDB>): Promise<void> {
  await db.schema
    .createTable('item')
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('flag', 'integer', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .execute()
}

test('parameters reach node:sqlite spread, and booleans are stored as 0 and 1', async (t) => {
  const db = openMemory(t)
  await createItems(db)
  // A boolean where the schema says number is the point of the test.
  const [yes, no] = [true, false] as unknown as [number, number]
  await db.insertInto('item').values({ id: 1, flag: yes, name: 'a' }).execute()
  await db.insertInto('item').values({ id: 2, flag: no, name: 'b' }).execute()
  const rows = await db.selectFrom('item').select(['id', 'flag']).where('id', 'in', [1, 2]).orderBy('id').execute()
  assert.deepEqual(rows, [
    { id: 1, flag: 1 },
    { id: 2, flag: 0 },
  ])
})

test('a Date parameter is refused instead of being stored as NULL', async (t) => {
  const db = openMemory(t)
  await assert.rejects(sql`select ${new Date()} as d`.execute(db), /parameter 1 is a Date \(store times as epoch-ms/)
})

test('rows are plain objects, equal to object literals under deepStrictEqual', async (t) => {
  const db = openMemory(t)
  await createItems(db)
  await db.insertInto('item').values({ id: 1, flag: 0, name: 'é' }).execute()
  const row = await db.selectFrom('item').selectAll().executeTakeFirstOrThrow()
  assert.deepStrictEqual(row, { id: 1, flag: 0, name: 'é' })
})

test('insert … returning yields rows and a plain insert reports affected rows and the insert id', async (t) => {
  const db = openMemory(t)
  await createItems(db)
  const returned = await db.insertInto('item').values({ id: 7, flag: 0, name: 'x' }).returning(['id']).execute()
  assert.deepEqual(returned, [{ id: 7 }])
  const result = await db.insertInto('item').values({ id: 8, flag: 0, name: 'y' }).executeTakeFirstOrThrow()
  assert.equal(result.insertId, 8n)
  assert.equal(result.numInsertedOrUpdatedRows, 1n)
})

test('a cached select * sees a column added by a later migration', async (t) => {
  const db = openMemory(t)
  await createItems(db)
  await db.insertInto('item').values({ id: 1, flag: 0, name: 'x' }).execute()
  assert.deepEqual(await db.selectFrom('item').selectAll().execute(), [{ id: 1, flag: 0, name: 'x' }])
  await db.schema
    .alterTable('item')
    .addColumn('extra', 'integer', (column) => column.notNull().defaultTo(5))
    .execute()
  assert.deepEqual(await db.selectFrom('item').selectAll().execute(), [{ id: 1, flag: 0, name: 'x', extra: 5 }])
})

test('a select streams its rows', async (t) => {
  const db = openMemory(t)
  await createItems(db)
  await db
    .insertInto('item')
    .values([1, 2, 3].map((id) => ({ id, flag: 0, name: `n${id}` })))
    .execute()
  const names: string[] = []
  for await (const row of db.selectFrom('item').select('name').orderBy('id').stream()) names.push(row.name)
  assert.deepEqual(names, ['n1', 'n2', 'n3'])
})

test('FTS5 with the trigram tokenizer matches part of a word', async (t) => {
  const db = openMemory(t)
  await sql`create virtual table doc using fts5(body, tokenize = 'trigram')`.execute(db)
  await sql`insert into doc (body) values (${'Ein wunderschöner Morgen'}), (${'nothing here'})`.execute(db)
  const { rows } = await sql<{ body: string }>`select body from doc where doc match ${'schön'}`.execute(db)
  assert.deepEqual(rows, [{ body: 'Ein wunderschöner Morgen' }])
})

test('a rolled back transaction leaves nothing, a committed one keeps its rows', async (t) => {
  const db = openMemory(t)
  await createItems(db)
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      await trx.insertInto('item').values({ id: 1, flag: 0, name: 'gone' }).execute()
      throw new Error('abort')
    }),
    /abort/,
  )
  await db.transaction().execute((trx) => trx.insertInto('item').values({ id: 2, flag: 0, name: 'kept' }).execute())
  const rows = await db.selectFrom('item').select('name').execute()
  assert.deepEqual(rows, [{ name: 'kept' }])
})

/** A file database in WAL mode through the dialect, and a second connection to the same file that can hold its write lock. */
function openShared(t: TestContext, busyTimeoutMs: number) {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-dialect-'))
  const file = join(dir, 'shared.db')
  const writer = new DatabaseSync(file)
  writer.exec(`pragma journal_mode = wal; pragma busy_timeout = ${busyTimeoutMs}`)
  const db = new Kysely<TestDB>({ dialect: createNodeSqliteDialect(writer, { busyTimeoutMs }) })
  const holder = new DatabaseSync(file)
  t.after(async () => {
    holder.close()
    await db.destroy()
    rmSync(dir, { recursive: true, force: true })
  })
  return { db, writer, holder }
}

test('a transaction waits for another connection’s write lock without stopping the thread', async (t) => {
  const { db, holder } = openShared(t, 3000)
  await createItems(db)
  holder.exec('begin immediate')
  const heldAt = performance.now()
  // This thread's own timer lets go of the lock: a wait that stopped the thread would never see it.
  const releasedAt = new Promise<number>((resolve) =>
    setTimeout(() => {
      holder.exec('commit')
      resolve(performance.now())
    }, 200),
  )
  await db.transaction().execute((trx) => trx.insertInto('item').values({ id: 1, flag: 0, name: 'after' }).execute())
  const committedAt = performance.now()
  assert.ok((await releasedAt) - heldAt >= 190, 'the lock was held until the timer')
  assert.ok(committedAt - heldAt < 1000, `the transaction began soon after the release (${committedAt - heldAt} ms)`)
  assert.deepEqual(await db.selectFrom('item').select('name').execute(), [{ name: 'after' }])
})

test('a transaction gives up on a write lock held past its busy timeout, and statements wait as before', async (t) => {
  const { db, writer, holder } = openShared(t, 300)
  await createItems(db)
  holder.exec('begin immediate')
  const started = performance.now()
  await assert.rejects(
    db.transaction().execute((trx) => trx.insertInto('item').values({ id: 1, flag: 0, name: 'never' }).execute()),
    /database is locked/,
  )
  const waited = performance.now() - started
  assert.ok(waited >= 290 && waited < 2000, `waited ${waited} ms for a 300 ms busy timeout`)
  // Outside transactions SQLite's own busy_timeout still applies: it is restored after the attempt.
  assert.deepEqual({ ...(writer.prepare('pragma busy_timeout').get() as object) }, { timeout: 300 })
  holder.exec('commit')
  await db.transaction().execute((trx) => trx.insertInto('item').values({ id: 2, flag: 0, name: 'later' }).execute())
  assert.deepEqual(await db.selectFrom('item').select('name').execute(), [{ name: 'later' }])
})
