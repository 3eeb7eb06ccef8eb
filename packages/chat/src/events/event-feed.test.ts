import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTimetickGenerator, migrateToLatest } from '@atrium/platform'
import { forEachDialect, onlyWithPostgres, openTestDatabase } from '@atrium/platform/testing'
import { chatMigrations } from '../db/migrations/index.ts'
import type { ChatDatabase } from '../db/schema.ts'
import { createEventFeed } from './event-feed.ts'

async function openFeed(t: Parameters<typeof openTestDatabase>[0], dialect: 'sqlite' | 'postgres', node = 0) {
  const database = await openTestDatabase<ChatDatabase>(t, dialect)
  await migrateToLatest(database, chatMigrations)
  return { database, feed: createEventFeed(database, createTimetickGenerator({ node })) }
}

const event = (content: string) => ({ chat_id: 1, addressee: 7, type: 'NewChatMessage' as const, data: { content } })

// The classic way to lose an event: a writer takes its tick, a later writer commits first, a reader
// moves its cursor past the later tick, then the first writer commits below the cursor.
test(
  'an event that commits after a later one is still delivered after the cursor passed the later one',
  onlyWithPostgres(),
  async (t) => {
    const { database, feed } = await openFeed(t, 'postgres')
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const slow = database.db.transaction().execute(async (trx) => {
      await feed.append(trx, event('first, committed last'))
      await gate
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    await database.db.transaction().execute((trx) => feed.append(trx, event('second, committed first')))
    await feed.committed()

    const before = await feed.list({ since: 0, limit: 100 })
    assert.deepEqual(
      before.Events.map((item) => JSON.parse(item.DataJson).content),
      ['second, committed first'],
    )
    release()
    await slow
    await feed.committed()
    const after = await feed.list({ since: before.LastTick, limit: 100 })
    assert.deepEqual(
      after.Events.map((item) => JSON.parse(item.DataJson).content),
      ['first, committed last'],
    )
  },
)

forEachDialect('cursor ticks keep increasing across generators whose clocks disagree', async (t, dialect) => {
  const { database } = await openFeed(t, dialect)
  const ahead = createEventFeed(database, createTimetickGenerator({ node: 1, now: () => Date.now() + 60_000 }))
  const behind = createEventFeed(database, createTimetickGenerator({ node: 2 }))
  for (const feed of [ahead, behind, ahead, behind]) {
    await database.db.transaction().execute((trx) => feed.append(trx, event('x')))
    await feed.committed()
  }
  const { Events } = await behind.list({ since: 0, limit: 100 })
  const ticks = Events.map((item) => item.TickUpdate)
  assert.equal(ticks.length, 4)
  assert.deepEqual(
    ticks,
    [...ticks].sort((a, b) => a - b),
  )
  assert.equal(new Set(ticks).size, 4)
})

test('unsequenced rows are invisible to readers (postgres)', onlyWithPostgres(), async (t) => {
  const { database, feed } = await openFeed(t, 'postgres')
  await database.db.transaction().execute((trx) => feed.append(trx, event('pending')))
  assert.deepEqual((await feed.list({ since: 0, limit: 10 })).Events, [])
  await feed.committed()
  assert.equal((await feed.list({ since: 0, limit: 10 })).Events.length, 1)
})
