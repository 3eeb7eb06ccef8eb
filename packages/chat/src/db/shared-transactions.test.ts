import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { type TestContext, test } from 'node:test'
import { migrateToLatest } from '@atrium/platform'
import { openTestDatabase } from '@atrium/platform/testing'
import { chatMigrations } from './migrations/index.ts'
import type { ChatDatabase } from './schema.ts'
import { createSharedTransactions } from './shared-transactions.ts'

async function setup(t: TestContext) {
  const database = await openTestDatabase<ChatDatabase>(t, 'sqlite')
  await migrateToLatest(database, chatMigrations)
  return { database, shared: createSharedTransactions(database.db) }
}

const profile = (member: number) => ({ member, name: `m${member}`, timetick_update: member })

test('concurrent work shares transactions; a piece that fails after writing rolls back alone', async (t) => {
  const { database, shared } = await setup(t)
  const results = await Promise.allSettled(
    Array.from({ length: 10 }, (_, i) =>
      shared(async (trx) => {
        await trx
          .insertInto('chat_profiles')
          .values(profile(i + 1))
          .execute()
        if (i === 4) throw new Error('piece 5 fails after writing')
        return i + 1
      }),
    ),
  )
  assert.deepEqual(
    results.map((result) => result.status),
    [
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ],
  )
  assert.match(String((results[4] as PromiseRejectedResult).reason), /piece 5 fails/)
  const members = await database.db.selectFrom('chat_profiles').select('member').orderBy('member').execute()
  assert.deepEqual(
    members.map((row) => row.member),
    [1, 2, 3, 4, 6, 7, 8, 9, 10],
  )
})

test('pieces that arrive together share one transaction', async (t) => {
  const { database, shared } = await setup(t)
  // A second connection sees only committed rows: while the second piece runs, the first piece's
  // row is not visible to it yet, because both are in one transaction that has not committed.
  const reader = new DatabaseSync(database.url.slice('sqlite:'.length), { readOnly: true })
  t.after(() => reader.close())
  const committedRows = () => Number(reader.prepare('select count(*) as n from chat_profiles').get()?.n)
  const [, seenBySecond] = await Promise.all([
    shared((trx) => trx.insertInto('chat_profiles').values(profile(1)).execute()),
    shared(async (trx) => {
      await trx.insertInto('chat_profiles').values(profile(2)).execute()
      return committedRows()
    }),
  ])
  assert.equal(seenBySecond, 0)
  assert.equal(committedRows(), 2)
})

test('a result is delivered only after its transaction committed', async (t) => {
  const { database, shared } = await setup(t)
  await shared((trx) => trx.insertInto('chat_profiles').values(profile(1)).execute())
  const row = await database.db.selectFrom('chat_profiles').selectAll().executeTakeFirst()
  assert.equal(row?.name, 'm1')
})

test('a constraint violation in one piece leaves the others committed', async (t) => {
  const { database, shared } = await setup(t)
  await database.db.insertInto('chat_profiles').values(profile(1)).execute()
  const [duplicate, fine] = await Promise.allSettled([
    shared((trx) => trx.insertInto('chat_profiles').values(profile(1)).execute()),
    shared((trx) => trx.insertInto('chat_profiles').values(profile(2)).execute()),
  ])
  assert.equal(duplicate.status, 'rejected')
  assert.equal(fine.status, 'fulfilled')
  assert.equal((await database.db.selectFrom('chat_profiles').selectAll().execute()).length, 2)
})
