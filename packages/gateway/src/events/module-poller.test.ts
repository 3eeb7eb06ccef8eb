import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { EventBatch } from '@atrium/platform'
import { until } from '@atrium/platform/testing'
import type { FastifyBaseLogger } from 'fastify'
import { SERVICE_SECRET } from '../../test/support.ts'
import { loadGatewayConfig } from '../config.ts'
import type { EventCursors } from './event-cursors.repository.ts'
import type { FetchEvents } from './module-events.ts'
import { createModulePoller } from './module-poller.ts'

const settings = loadGatewayConfig({ ServiceSecret: SERVICE_SECRET }, {}).Events
const cursors = { get: async () => undefined, save: async () => {} } as unknown as EventCursors
const silent = { warn() {}, info() {}, debug() {}, error() {} } as unknown as FastifyBaseLogger
const HEAD = 100

test('subscribers that open one after another share one restart of their chunk, and none misses an event', async (t) => {
  // A module whose long-polls wait until aborted, except for the head probe and an event it holds.
  const calls: (readonly string[])[] = []
  let held: EventBatch | undefined
  const fetchEvents: FetchEvents = (query, signal) => {
    if (query.subjects.length === 0) return Promise.resolve({ Events: [], LastTick: HEAD })
    calls.push(query.subjects)
    if (held && query.subjects.includes('user:10')) {
      const batch = held
      held = undefined
      return Promise.resolve(batch)
    }
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))
  }
  const delivered: string[] = []
  const poller = createModulePoller({
    module: 'chat',
    fetchEvents,
    cursors,
    settings,
    log: silent,
    onEvents: (_module, _chunk, events) => delivered.push(...events.map((event) => event.to)),
    // A window no loaded machine outlasts while ten joins come in (20 ms in use).
    restartCoalesceMs: 1000,
  })
  t.after(() => poller.close())

  await poller.join(['user:0'])
  await until(() => calls.some((subjects) => subjects.length === 1), 'the first long-poll')
  // Ten more streams open, each in its own turn of the event loop, as connections arrive.
  for (let id = 1; id <= 10; id++) {
    await nextTurn()
    await poller.join([`user:${id}`])
  }
  await until(() => calls.at(-1)?.length === 11, 'a long-poll for all eleven')
  const restarts = calls.filter((subjects) => subjects.length > 1).map((subjects) => subjects.length)
  // Restarting at each join made ten calls here, one per new subscriber.
  assert.ok(restarts.length === 1, `${restarts.length} calls for the new subjects: ${JSON.stringify(restarts)}`)

  // An event for the last of them, committed before the next subscriber's restart, is handed over.
  held = {
    Events: [{ CrmId: 10, AppId: 0, Timetick: HEAD + 1, TickUpdate: HEAD + 1, EventType: 'NewChatMessage', Data: {} }],
    LastTick: HEAD + 1,
  } as unknown as EventBatch
  await poller.join(['user:11'])
  await until(() => delivered.includes('m:10'), 'the event of the tenth subscriber')
})
