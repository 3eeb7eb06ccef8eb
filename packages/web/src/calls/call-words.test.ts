import assert from 'node:assert/strict'
import test from 'node:test'
import {
  type CallRecord,
  callSummary,
  formatDuration,
  isMissed,
  parseCallRecord,
  spokenDuration,
} from './call-words.ts'

const ended = (fields: Partial<CallRecord>): CallRecord => ({
  media: 'audio',
  state: 'ended',
  caller: '1',
  callee: '2',
  answered_at: '',
  ended_at: '2026-11-26T10:00:00.000Z',
  duration: 0,
  end_reason: 'completed',
  ...fields,
})

test('durations read like a clock and aloud', () => {
  assert.deepEqual([0, 42, 151, 3723].map(formatDuration), ['0:00', '0:42', '2:31', '1:02:03'])
  assert.deepEqual([0, 1, 151, 3600].map(spokenDuration), ['0 seconds', '1 second', '2 minutes 31 seconds', '1 hour'])
})

test('a call row says how the call went, from each side', () => {
  const completed = ended({ media: 'video', duration: 151 })
  assert.equal(callSummary(completed, '1'), 'Outgoing video call · 2:31')
  assert.equal(callSummary(completed, '2'), 'Incoming video call · 2:31')
  const missed = ended({ end_reason: 'missed' })
  assert.deepEqual([callSummary(missed, '1'), callSummary(missed, '2')], ['Call: no answer', 'Missed call'])
  const declined = ended({ end_reason: 'rejected' })
  assert.deepEqual([callSummary(declined, '1'), callSummary(declined, '2')], ['Call declined', 'Declined call'])
  assert.equal(callSummary(ended({ end_reason: 'cancelled' }), '2'), 'Missed call')
  assert.equal(callSummary(ended({ end_reason: 'busy' }), '1'), 'Call: line busy')
  assert.equal(callSummary(ended({ end_reason: 'failed' }), '1'), 'Call failed')
  assert.equal(callSummary(ended({ end_reason: 'failed', duration: 75 }), '1'), 'Call dropped · 1:15')
  assert.equal(callSummary({ ...missed, state: 'ringing', end_reason: '' }, '2'), 'Incoming call')
  assert.deepEqual([isMissed(missed, '2'), isMissed(missed, '1'), isMissed(completed, '2')], [true, false, false])
})

test('only call records parse as calls', () => {
  assert.equal(parseCallRecord('not json'), undefined)
  assert.equal(parseCallRecord('{"text":"hi"}'), undefined)
  assert.equal(parseCallRecord(JSON.stringify(ended({})))?.end_reason, 'completed')
})
