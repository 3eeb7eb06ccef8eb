import assert from 'node:assert/strict'
import { statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { createDatabase } from './database.ts'

const ROW_BYTES = 4000
const ROWS = 2500

async function tempFile(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'atrium-checkpoints-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return join(dir, 'data.db')
}

/** A file database with an empty `blob` table, destroyed after the test. */
async function openBlobDatabase(t: TestContext) {
  const path = await tempFile(t)
  const database = createDatabase<{ blob: { id: number; data: string } }>(`sqlite:${path}`)
  t.after(() => database.destroy())
  await sql`create table blob (id integer primary key, data text not null)`.execute(database.db)
  return { path, db: database.db }
}

async function waitFor(check: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) return false
    await sleep(20)
  }
  return true
}

test('SQLite: the writing connection never checkpoints; the checkpoint thread copies its log into the file', async (t) => {
  const { path, db } = await openBlobDatabase(t)
  const setting = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)
  assert.equal(setting.rows[0]!.wal_autocheckpoint, 0)

  // About 10 MB in small transactions: far past the 1,000 pages at which SQLite would checkpoint
  // inside a commit.
  for (let i = 0; i < ROWS; i += 50) {
    await db.transaction().execute(async (trx) => {
      for (let k = i; k < i + 50; k++)
        await trx
          .insertInto('blob')
          .values({ id: k, data: 'x'.repeat(ROW_BYTES) })
          .execute()
    })
  }
  // The rows reach the database file itself only through checkpoints, which this connection no
  // longer runs: the thread's do.
  const copied = await waitFor(() => statSync(path).size >= ROWS * ROW_BYTES)
  assert.ok(copied, `the database file holds ${statSync(path).size} bytes, its log was not checkpointed`)
  const { count } = await db.selectFrom('blob').select(db.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()
  assert.equal(Number(count), ROWS)
})

test('SQLite: closed, a database leaves no log behind and another connection reads everything', async (t) => {
  const path = await tempFile(t)
  const database = createDatabase(`sqlite:${path}`)
  await sql`create table note (id integer primary key, body text not null)`.execute(database.db)
  await sql`insert into note (id, body) values (1, 'kept')`.execute(database.db)
  await database.destroy()
  assert.throws(() => statSync(`${path}-wal`), /ENOENT/)
  const reader = new DatabaseSync(path, { readOnly: true })
  t.after(() => reader.close())
  assert.deepEqual({ ...reader.prepare('select body from note where id = 1').get() }, { body: 'kept' })
})

test('SQLite: a long log and a reader on it never hold the writer for long, and the log starts over once the reader is gone', async (t) => {
  const { path, db } = await openBlobDatabase(t)
  const insert = (id: number, bytes: number) => sql`insert into blob (id, data) values (${id}, ${'x'.repeat(bytes)})`
  // One transaction past the 10,000 pages of log at which the thread asks the next writer to start
  // it over, a write right after it, before the thread copied it (so the log goes on), and a reader
  // holding a mark at its end (another process, a backup).
  const LONG_LOG_ROWS = 11_000
  await db.transaction().execute(async (trx) => {
    for (let k = 0; k < LONG_LOG_ROWS; k++) await insert(k, ROW_BYTES).execute(trx)
  })
  await insert(LONG_LOG_ROWS, 10).execute(db)
  const reader = new DatabaseSync(path)
  t.after(() => reader.isOpen && reader.close())
  reader.exec('begin')
  reader.prepare('select count(*) from blob').get()

  // Small writes for 2.5 s: a checkpoint that took the writer's lock and waited for the reader
  // (2 s at a time, as it used to) would hold one of them that long, or past its 5 s busy timeout.
  let slowest = 0
  let id = LONG_LOG_ROWS + 1
  for (const until = Date.now() + 2500; Date.now() < until; id++) {
    const started = performance.now()
    await insert(id, 10).execute(db)
    slowest = Math.max(slowest, performance.now() - started)
    await sleep(20)
  }
  assert.ok(slowest < 1000, `a write waited ${slowest.toFixed(0)} ms for the lock`)

  // With the reader gone, the next writes start the log from its beginning again.
  reader.exec('commit')
  reader.close()
  const probe = new DatabaseSync(path)
  t.after(() => probe.close())
  let log = Number.POSITIVE_INFINITY
  for (const until = Date.now() + 10_000; log >= 1000 && Date.now() < until; await sleep(20)) {
    await insert(id++, 10).execute(db)
    log = (probe.prepare('pragma wal_checkpoint(PASSIVE)').get() as { log: number }).log
  }
  assert.ok(log < 1000, `the log still holds ${log} pages: it never started over`)
})

test('SQLite: a writer that never lets go of its lock checkpoints itself once the log runs long, which bounds it', async (t) => {
  const { path, db } = await openBlobDatabase(t)
  // An import: transactions of 1,000 pages back to back, 45,000 pages in all, with no moment between
  // them for the thread to start the log over (nor to hear a message: only promises run meanwhile).
  const TRANSACTIONS = 45
  const ROWS_PER_TRANSACTION = 1000
  for (let i = 0; i < TRANSACTIONS * ROWS_PER_TRANSACTION; i += ROWS_PER_TRANSACTION) {
    await db.transaction().execute(async (trx) => {
      for (let k = i; k < i + ROWS_PER_TRANSACTION; k++) {
        await sql`insert into blob (id, data) values (${k}, ${'x'.repeat(ROW_BYTES)})`.execute(trx)
      }
    })
  }
  // The log file grows only past its longest log so far: about 20,000 pages (where the writer
  // starts to checkpoint) and a few transactions, where without that it holds every page written.
  const logPages = statSync(`${path}-wal`).size / 4096
  assert.ok(logPages < 30_000, `the log grew to ${Math.round(logPages)} pages`)
  const { count } = await db.selectFrom('blob').select(db.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()
  assert.equal(Number(count), TRANSACTIONS * ROWS_PER_TRANSACTION)
})
