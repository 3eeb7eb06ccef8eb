import assert from 'node:assert/strict'
import { test } from 'node:test'
import { NOTIFY_PAYLOAD_MAX } from '@atrium/platform'
import { payloads } from './typing-link.ts'

const chunk = `event: typing\ndata: ${JSON.stringify({ chat_id: '896021547139072', user: '896021546614784', expires_ms: 6000 })}\n\n`

test('a typing frame for a large chat goes as several notifications within PostgreSQL’s payload limit', () => {
  // 2,000 members with 16-digit ids: about 34 KB of ids, more than four payloads hold.
  const members = Array.from({ length: 2000 }, (_, index) => 896_021_546_614_784 + index * 7)
  const sent = payloads({ members, chunk })
  assert.ok(sent.length >= 5, `${sent.length} payloads`)
  for (const payload of sent)
    assert.ok(Buffer.byteLength(payload) <= NOTIFY_PAYLOAD_MAX, `${Buffer.byteLength(payload)} bytes`)
  const parsed = sent.map((payload) => JSON.parse(payload) as { members: number[]; chunk: string })
  assert.deepEqual(
    parsed.flatMap((frame) => frame.members),
    members,
  )
  assert.ok(parsed.every((frame) => frame.chunk === chunk))
})

test('a typing frame for a small chat goes as one notification', () => {
  assert.deepEqual(payloads({ members: [7, 11], chunk }), [JSON.stringify({ members: [7, 11], chunk })])
  assert.deepEqual(payloads({ members: [], chunk }), [])
})
