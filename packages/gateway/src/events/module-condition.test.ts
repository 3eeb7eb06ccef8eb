import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EventBatch } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import { SERVICE_SECRET } from '../../test/support.ts'
import { loadGatewayConfig } from '../config.ts'
import type { EventCursors } from './event-cursors.repository.ts'
import { EventsCallError, type FetchEvents } from './module-events.ts'
import { createModulePoller } from './module-poller.ts'

interface Entry {
  level: string
  fields: Record<string, unknown>
  message: string
}

/** A logger that keeps what it is given, as pino would print it. */
function recordingLog(entries: Entry[]): FastifyBaseLogger {
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    entries.push({ level, fields, message })
  const log = { warn: at('warn'), info: at('info'), debug: at('debug'), error: at('error') }
  return log as unknown as FastifyBaseLogger
}

const settings = loadGatewayConfig(
  { ServiceSecret: SERVICE_SECRET, Events: { RetryMinMs: 10, RetryMaxMs: 20 } },
  {},
).Events
const cursors = { get: async () => undefined, save: async () => {} } as unknown as EventCursors

test('a module without an events endpoint is warned about once, without a stack, and again only when that changes', async (t) => {
  const entries: Entry[] = []
  let answer: () => EventBatch = () => {
    throw new EventsCallError('missing', 'the module has no events endpoint (404)')
  }
  let calls = 0
  const fetchEvents: FetchEvents = async () => {
    calls++
    await new Promise((resolve) => setTimeout(resolve, 1))
    return answer()
  }
  const poller = createModulePoller({
    module: 'crm',
    fetchEvents,
    cursors,
    settings,
    onEvents: () => {},
    log: recordingLog(entries),
  })
  t.after(() => poller.close())
  const warnings = () => entries.filter((entry) => entry.level === 'warn')
  const waitForCalls = async (count: number) => {
    const deadline = Date.now() + 5_000
    while (calls < count) {
      assert.ok(Date.now() < deadline, `only ${calls} events calls`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }

  // Subscribers come and go: each first join probes the feed's head, and the loop keeps polling.
  for (const id of [1, 2, 3]) (await poller.join([`user:${id}`])).leave()
  await poller.join(['user:4'])
  await waitForCalls(calls + 3)
  assert.equal(warnings().length, 1, JSON.stringify(entries))
  assert.equal(warnings()[0]?.message, 'events: the module has no events endpoint; asking again later')
  assert.deepEqual(warnings()[0]?.fields, { module: 'crm' }, 'no error object, so no stack')

  answer = () => ({ Events: [], LastTick: 5 }) as unknown as EventBatch
  await waitForCalls(calls + 2)
  assert.equal(entries.filter((entry) => entry.message === 'events: the module answers again').length, 1)

  answer = () => {
    throw new EventsCallError('unreachable', 'connect ECONNREFUSED 127.0.0.1:8083')
  }
  await waitForCalls(calls + 4)
  assert.equal(warnings().length, 2)
  assert.deepEqual(warnings()[1]?.fields, { module: 'crm', reason: 'connect ECONNREFUSED 127.0.0.1:8083' })
})
