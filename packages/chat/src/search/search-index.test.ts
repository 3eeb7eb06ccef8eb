import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { migrateToLatest } from '@atrium/platform'
import { openTestDatabase } from '@atrium/platform/testing'
import { type Kysely, sql } from 'kysely'
import { chatMigrations } from '../db/migrations/index.ts'
import type { ChatDatabase } from '../db/schema.ts'
import { createSharedTransactions } from '../db/shared-transactions.ts'
import { indexLeftovers, indexPendingMessages } from './search-index.ts'

async function setup(t: TestContext, migrations = chatMigrations) {
  const database = await openTestDatabase<ChatDatabase>(t, 'sqlite')
  await migrateToLatest(database, migrations)
  return database.db
}

/** A message row with every other column at its default. */
function insertMessage(db: Kysely<ChatDatabase>, id: number, content: string) {
  return sql`INSERT INTO chat_mess (timetick, timetick_update, chat_id, owner, content)
    VALUES (${id}, ${id}, 1, 1, ${content})`.execute(db)
}

async function matching(db: Kysely<ChatDatabase>, phrase: string): Promise<number[]> {
  const { rows } = await sql<{ rowid: number }>`SELECT rowid FROM chat_mess_fts
    WHERE chat_mess_fts MATCH ${`"${phrase}"`} ORDER BY rowid`.execute(db)
  return rows.map((row) => Number(row.rowid))
}

/** FTS5's own check that the index holds exactly what chat_mess holds; throws when it does not. */
function checkIntegrity(db: Kysely<ChatDatabase>) {
  return sql`INSERT INTO chat_mess_fts (chat_mess_fts, rank) VALUES ('integrity-check', 1)`.execute(db)
}

/** Segments of the index: every segment has at least one row in the `_idx` table. */
async function segments(db: Kysely<ChatDatabase>): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(DISTINCT segid) AS n FROM chat_mess_fts_idx`.execute(db)
  return Number(rows[0]!.n)
}

async function waiting(db: Kysely<ChatDatabase>): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM chat_mess_fts_pending`.execute(db)
  return Number(rows[0]!.n)
}

test('SQLite: the search index merges a little at every write and stays whole across many small commits', async (t) => {
  const db = await setup(t)
  const config = await sql<{ k: string; v: number }>`SELECT k, v FROM chat_mess_fts_config`.execute(db)
  const settings = Object.fromEntries(config.rows.map((row) => [row.k, Number(row.v)]))
  assert.equal(settings.automerge, 16)
  assert.equal(settings.crisismerge, 64)

  // One commit per message, as the module makes when writes come one at a time: each adds a
  // segment, so levels fill and incremental merges run.
  const count = 400
  for (let i = 1; i <= count; i++) {
    await db.transaction().execute(async (trx) => {
      await insertMessage(trx, i, `note ${i} about invoice ${i % 7}`)
      await indexPendingMessages(trx)
    })
  }
  await checkIntegrity(db)
  const expected = Array.from({ length: count }, (_, i) => i + 1).filter((i) => i % 7 === 3)
  assert.deepEqual(await matching(db, 'invoice 3'), expected)
})

test('SQLite: the messages of one shared transaction enter the index as one segment, found at once', async (t) => {
  const db = await setup(t)
  const shared = createSharedTransactions(db, indexPendingMessages)
  const count = 20
  // Concurrent writes gather into one transaction (shared-transactions.ts). Were each message
  // indexed by its own statement, FTS5 would write a segment per message (migration 0022).
  await Promise.all(
    Array.from({ length: count }, (_, i) => shared((trx) => insertMessage(trx, i + 1, `parcel ${i + 1} shipped`))),
  )
  assert.equal(await segments(db), 1)
  assert.equal(await waiting(db), 0)
  assert.deepEqual(
    await matching(db, 'shipped'),
    Array.from({ length: count }, (_, i) => i + 1),
  )
  await checkIntegrity(db)
})

test('SQLite: edits and deletes reach the index whether the message was indexed yet or still waits', async (t) => {
  const db = await setup(t)
  const shared = createSharedTransactions(db, indexPendingMessages)
  await shared(async (trx) => {
    await insertMessage(trx, 1, 'alpha indexed')
    await insertMessage(trx, 2, 'bravo indexed')
  })
  await shared(async (trx) => {
    // Indexed rows: the old words leave the index.
    await sql`UPDATE chat_mess SET content = 'alpha edited' WHERE timetick = 1`.execute(trx)
    await sql`DELETE FROM chat_mess WHERE timetick = 2`.execute(trx)
    // Rows that still wait in the same transaction: indexed as they are at the commit, or not at all.
    await insertMessage(trx, 3, 'charlie waiting')
    await sql`UPDATE chat_mess SET content = 'charlie edited' WHERE timetick = 3`.execute(trx)
    await insertMessage(trx, 4, 'delta waiting')
    await sql`DELETE FROM chat_mess WHERE timetick = 4`.execute(trx)
  })
  assert.deepEqual(await matching(db, 'edited'), [1, 3])
  for (const gone of ['indexed', 'waiting', 'bravo', 'delta']) assert.deepEqual(await matching(db, gone), [], gone)
  assert.equal(await waiting(db), 0)
  await checkIntegrity(db)
})

test('SQLite: a piece that fails takes its messages out of the queue with it', async (t) => {
  const db = await setup(t)
  const shared = createSharedTransactions(db, indexPendingMessages)
  const results = await Promise.allSettled([
    shared((trx) => insertMessage(trx, 1, 'kept message')),
    shared(async (trx) => {
      await insertMessage(trx, 2, 'failed message')
      throw new Error('fails after writing')
    }),
  ])
  assert.deepEqual(
    results.map((result) => result.status),
    ['fulfilled', 'rejected'],
  )
  assert.deepEqual(await matching(db, 'message'), [1])
  await checkIntegrity(db)
})

test('SQLite: messages written while the module was stopped are indexed at its start, in batches', async (t) => {
  const db = await setup(t)
  // An import straight into the file: rows and their queue entries, no index yet.
  const count = 12_000
  await db.transaction().execute(async (trx) => {
    for (let i = 1; i <= count; i++) await insertMessage(trx, i, `imported ${i % 3 === 0 ? 'fizz' : 'plain'}`)
  })
  assert.deepEqual(await matching(db, 'fizz'), [])
  assert.equal(await indexLeftovers(db), count)
  assert.equal(await waiting(db), 0)
  const fizz = await matching(db, 'fizz')
  assert.equal(fizz.length, count / 3)
  assert.ok(fizz.every((id) => id % 3 === 0))
  await checkIntegrity(db)
  assert.equal(await indexLeftovers(db), 0)
})

test('SQLite: messages indexed before migration 0022 can still be edited and deleted', async (t) => {
  const before = Object.fromEntries(Object.entries(chatMigrations).filter(([name]) => name < '0022'))
  const database = await openTestDatabase<ChatDatabase>(t, 'sqlite')
  await migrateToLatest(database, before)
  const { db } = database
  await insertMessage(db, 1, 'old one')
  await insertMessage(db, 2, 'old two')
  await migrateToLatest(database, chatMigrations)
  await sql`UPDATE chat_mess SET content = 'new one' WHERE timetick = 1`.execute(db)
  await sql`DELETE FROM chat_mess WHERE timetick = 2`.execute(db)
  await db.transaction().execute(indexPendingMessages)
  assert.deepEqual(await matching(db, 'old'), [])
  assert.deepEqual(await matching(db, 'new one'), [1])
  await checkIntegrity(db)
})
