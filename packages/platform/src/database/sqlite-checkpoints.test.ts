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

async function waitFor(check: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) return false
    await sleep(20)
  }
  return true
}

test('SQLite: the writing connection never checkpoints; the checkpoint thread copies its log into the file', async (t) => {
  const path = await tempFile(t)
  const database = createDatabase<{ blob: { id: number; data: string } }>(`sqlite:${path}`)
  t.after(() => database.destroy())
  const { db } = database
  const setting = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)
  assert.equal(setting.rows[0]!.wal_autocheckpoint, 0)

  await sql`create table blob (id integer primary key, data text not null)`.execute(db)
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
