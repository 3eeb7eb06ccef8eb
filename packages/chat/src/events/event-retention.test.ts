import assert from 'node:assert/strict'
import { createDatabase, type EventBatch, timetickAt } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, until } from '@atrium/platform/testing'
import { createGroup, startChatOn } from '../../test/support.ts'
import type { ChatDatabase } from '../db/schema.ts'

const HOUR = 3_600_000

/** An event row for member 1, written straight to the table with its tick (as if that old). */
const oldEvent = (tick: number, chatId: number) => ({
  timetick: tick,
  tick_update: tick,
  chat_id: chatId,
  addressee: 1,
  app_id: 0,
  event_type: 'ChatUpdated',
  data: '{}',
})

forEachDialect('events past Events.RetentionHours are deleted; newer ones and the feed go on', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  // This instance sweeps once a day, so the old events are surely there until the sweeping one starts.
  const chat = await startChatOn(t, url, { Events: { RetentionHours: 25, RetentionSweepSeconds: 86_400 } })
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  await chat.register(1, 2)
  const groupId = await createGroup(chat.user(1), [2])
  // Three events written as if they were 48, 26 and 24 hours old (the first two past the retention).
  const ages = [48, 26, 24]
  const old = ages.map((hours, index) => timetickAt(Date.now() - hours * HOUR) + index)
  await database.db
    .insertInto('chat_events')
    .values(old.map((tick) => oldEvent(tick, Number(groupId))))
    .execute()
  const sent = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'recent' })

  const ticksFor = async (since = 0) => {
    const { status, result } = await chat.events({ subjects: 'user:1', since, limit: 1000 })
    assert.equal(status, 200)
    return result as EventBatch
  }
  const before = (await ticksFor()).Events.map((event) => Number(event.TickUpdate))
  assert.deepEqual(before.slice(0, 3), old, 'the old events are there before the sweep')

  await startChatOn(t, url, { Events: { RetentionHours: 25, RetentionSweepSeconds: 1 } })
  await until(async () => !(await ticksFor()).Events.some((event) => Number(event.TickUpdate) === old[1]), 'the sweep')
  const after = await ticksFor()
  const kept = after.Events.map((event) => Number(event.TickUpdate))
  assert.deepEqual(kept, before.slice(2), 'exactly the two past the retention are gone')
  assert.ok(
    after.Events.some(
      (event) => event.EventType === 'NewChatMessage' && (event.Data as { message_id: string }).message_id === sent.id,
    ),
  )

  // The feed continues from its head: a new event comes after every kept one.
  await chat.user(2).ok('send_message', { chat_id: groupId, content: 'after the sweep' })
  const next = await ticksFor(after.LastTick)
  assert.deepEqual(
    next.Events.map((event) => event.EventType),
    ['NewChatMessage'],
  )
  assert.ok(Number(next.Events[0]!.TickUpdate) > Math.max(...kept))
})

forEachDialect(
  'the newest event stays past the retention: its tick is the head the feed continues from',
  async (t, dialect) => {
    const url = await createTestDatabaseUrl(t, dialect)
    await startChatOn(t, url, { Events: { RetentionHours: 25, RetentionSweepSeconds: 1 } })
    const database = createDatabase<ChatDatabase>(url)
    t.after(() => database.destroy())
    // Both past the retention; the second is the newest row, so it stays as the head.
    const old = [30, 27].map((hours, index) => timetickAt(Date.now() - hours * HOUR) + index)
    await database.db
      .insertInto('chat_events')
      .values(old.map((tick) => oldEvent(tick, 1)))
      .execute()
    const stored = async () =>
      (await database.db.selectFrom('chat_events').select('tick_update').orderBy('tick_update').execute()).map((r) =>
        Number(r.tick_update),
      )
    // Without the head rule both go, and this never holds.
    await until(async () => (await stored()).length === 1, 'one row left')
    assert.deepEqual(await stored(), [old[1]])
  },
)
