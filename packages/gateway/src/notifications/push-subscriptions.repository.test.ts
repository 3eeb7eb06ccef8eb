import assert from 'node:assert/strict'
import { createTimetickGenerator, migrateToLatest } from '@atrium/platform'
import { forEachDialect, listNullableColumns, openTestDatabase } from '@atrium/platform/testing'
import { gatewayMigrations } from '../db/migrations/index.ts'
import type { GatewayDatabase } from '../db/schema.ts'
import { createPushSubscriptions } from './push-subscriptions.repository.ts'

forEachDialect('push subscriptions have no nullable column and list their users once', async (t, dialect) => {
  const database = await openTestDatabase<GatewayDatabase>(t, dialect)
  await migrateToLatest(database, gatewayMigrations)
  assert.deepEqual(await listNullableColumns(database), [])

  let time = 1_000
  const subscriptions = createPushSubscriptions(
    database.db,
    database.dialect,
    createTimetickGenerator({ node: 1 }),
    () => time,
  )
  const browser = (n: number) => ({ endpoint: `https://push.example/${n}`, p256dh: 'key', auth: 'auth', userAgent: '' })
  for (const [crmId, n] of [
    [7, 1],
    [7, 2],
    [9, 3],
  ] as const) {
    await subscriptions.save({ crmId, ...browser(n) }, 10)
    time += 1
  }
  assert.deepEqual(await subscriptions.subscribedUsers(), [7, 9])
  assert.deepEqual(
    (await subscriptions.listFor(7)).map((row) => row.endpoint),
    ['https://push.example/2', 'https://push.example/1'],
  )

  const [newest] = await subscriptions.listFor(7)
  await subscriptions.recordFailure(newest!.id, 'the push service answered 503')
  await subscriptions.recordFailure(newest!.id, 'the push service answered 503')
  const [failed] = await subscriptions.listFor(7)
  assert.deepEqual([failed!.failures, failed!.last_error], [2, 'the push service answered 503'])
  await subscriptions.recordSuccess(failed!)
  const [healthy] = await subscriptions.listFor(7)
  assert.deepEqual([healthy!.failures, healthy!.last_error, healthy!.last_success], [0, '', time])

  const moved = await subscriptions.save({ crmId: 9, ...browser(1) }, 10)
  assert.equal(moved.previousOwner, 7)
  await subscriptions.removeGone(moved.subscription.id)
  assert.deepEqual(await subscriptions.subscribedUsers(), [7, 9])
  assert.equal(await subscriptions.remove(9, 'https://push.example/3'), true)
  assert.equal(await subscriptions.has(9), false)
  assert.deepEqual(await subscriptions.subscribedUsers(), [7])
})
