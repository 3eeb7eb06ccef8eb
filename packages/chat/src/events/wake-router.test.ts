import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { test } from 'node:test'
import { createTimetickGenerator, type DatabaseDialect, migrateToLatest } from '@atrium/platform'
import { forEachDialect, openTestDatabase } from '@atrium/platform/testing'
import { chatMigrations } from '../db/migrations/index.ts'
import type { ChatDatabase } from '../db/schema.ts'
import { type ChatEventInput, createEventFeed, type EventFeed, type Subjects } from './event-feed.ts'
import { createWakeRouter, type WakeRouter } from './wake-router.ts'

const LONG = 60_000
const subjects = (members: number[], apps: number[] = []): Subjects => ({ members, apps })

async function setup(t: TestContext, dialect: DatabaseDialect, recheckMs = LONG) {
  const database = await openTestDatabase<ChatDatabase>(t, dialect)
  await migrateToLatest(database, chatMigrations)
  const feed = createEventFeed(database, createTimetickGenerator({ node: 0 }))
  // Chat 1 has members 7 and 9.
  await database.db
    .insertInto('chat_members')
    .values([7, 9].map((member) => ({ chat_id: 1, member, role: 0, last_read: 0, joined: 0, timetick_update: 0 })))
    .execute()
  const router = createWakeRouter(feed.touched, recheckMs)
  t.after(() => router.close())
  // The plugin wakes the router through the throttle; here every commit checks at once.
  const stop = feed.onSequenced(router.check)
  t.after(stop)
  const commit = async (event: Omit<ChatEventInput, 'type' | 'data'>, feedOf: EventFeed = feed) => {
    await database.db.transaction().execute((trx) => feedOf.append(trx, { type: 'ChatUpdated', data: {}, ...event }))
    await feedOf.committed()
  }
  return { database, feed, router, commit }
}

/** Resolves true when the waiter is woken within `ms`, false when it is not. */
async function wokenWithin(waiter: ReturnType<WakeRouter['join']>, seen: number, ms: number): Promise<boolean> {
  await waiter.wait(seen, ms)
  return waiter.wakes > seen
}

forEachDialect('a commit wakes only the waiters whose subjects its events concern', async (t, dialect) => {
  const { router, commit } = await setup(t, dialect)
  const forSeven = router.join(subjects([7]))
  const forEight = router.join(subjects([8]))
  const forNine = router.join(subjects([9]))
  const forApp = router.join(subjects([], [5]))
  const forAll = router.join(undefined)

  await commit({ chat_id: 2, addressee: 7 })
  assert.equal(await wokenWithin(forSeven, 0, LONG), true, 'its addressee')
  assert.equal(await wokenWithin(forAll, 0, LONG), true, 'no subjects: every event')
  assert.deepEqual([forEight.wakes, forNine.wakes, forApp.wakes], [0, 0, 0])

  // A chat-wide event concerns the chat's members; an app event its app.
  await commit({ chat_id: 1, app_id: 5 })
  assert.equal(await wokenWithin(forNine, 0, LONG), true, 'a member of the chat')
  assert.equal(await wokenWithin(forApp, 0, LONG), true, 'the app')
  assert.equal(await wokenWithin(forSeven, 1, LONG), true, 'the other member')
  assert.equal(forEight.wakes, 0, 'not a member, not addressed')
})

forEachDialect('a waiter that left is not woken; a waiter that joins later misses nothing', async (t, dialect) => {
  const { router, commit } = await setup(t, dialect)
  const gone = router.join(subjects([7]))
  gone.leave()
  const later = router.join(subjects([7]))
  await commit({ chat_id: 2, addressee: 7 })
  assert.equal(await wokenWithin(later, 0, LONG), true)
  assert.equal(gone.wakes, 0)
})

forEachDialect('events committed by another instance are found by the periodic check', async (t, dialect) => {
  const { database, router, commit } = await setup(t, dialect, 50)
  // Another instance's feed: its commits do not reach this router's onSequenced.
  const other = createEventFeed(database, createTimetickGenerator({ node: 1 }))
  const waiter = router.join(subjects([9]))
  await commit({ chat_id: 1 }, other)
  assert.equal(await wokenWithin(waiter, 0, 5_000), true)
})

test('a check that fails wakes every waiter, so their own reads run', async (t) => {
  let fail = false
  const router = createWakeRouter(async () => {
    if (fail) throw new Error('database gone')
    return { head: 1, everyone: false, members: new Set(), apps: new Set() }
  }, LONG)
  t.after(() => router.close())
  const waiter = router.join(subjects([7]))
  router.check()
  assert.equal(await wokenWithin(waiter, 0, 50), false, 'nothing for it')
  fail = true
  router.check()
  assert.equal(await wokenWithin(waiter, 0, LONG), true)
})

test('close answers every waiter at once', async () => {
  const router = createWakeRouter(async () => ({ head: 0, everyone: false, members: new Set(), apps: new Set() }), LONG)
  const waiter = router.join(undefined)
  const waiting = waiter.wait(0, LONG)
  router.close()
  await waiting
  assert.equal(waiter.wakes, 0)
})
