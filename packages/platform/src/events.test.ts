import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseEventBatch } from './events.ts'

const item = { CrmId: 7, AppId: 0, Timetick: 100, TickUpdate: 101, EventType: 'NewChatMessage', Data: { text: 'hi' } }

test('an EventBatch from a module is checked item by item, Muted included', () => {
  const batch = {
    Events: [item, { ...item, CrmId: 8, Muted: true }, { ...item, CrmId: 9, Muted: false }],
    LastTick: 101,
  }
  assert.deepEqual(parseEventBatch(batch), batch)
  assert.throws(() => parseEventBatch({ ...batch, Events: [{ ...item, Muted: 'yes' }] }), {
    message: 'EventBatch.Events[0].Muted is not a boolean',
  })
  assert.throws(() => parseEventBatch({ ...batch, Events: [item, { ...item, CrmId: -1 }] }), {
    message: 'EventBatch.Events[1].CrmId is not an id',
  })
  assert.throws(() => parseEventBatch({ ...batch, Events: [{ ...item, EventType: '' }] }), /EventType is not a name/)
  assert.throws(() => parseEventBatch({ ...batch, Events: [{ ...item, Data: [] }] }), /Data is not an object/)
  assert.throws(() => parseEventBatch({ Events: [], LastTick: 'x' }), /LastTick is not a tick/)
  assert.throws(() => parseEventBatch(null), /not an object/)
})
