import assert from 'node:assert/strict'
import { test } from 'node:test'
import { NOTIFY_PAYLOAD_MAX } from '@atrium/platform'
import { createUsageLink, parseUsageReport, type UsageReport, usagePayloads } from './usage-share.ts'

/** A session id as the limits key it: 64 hex digits. */
const sessionId = (index: number) => index.toString(16).padStart(64, 'a')

test('a report of many sessions goes as several notifications within PostgreSQL’s payload limit', () => {
  const uses: [string, number][] = Array.from({ length: 500 }, (_, index) => [sessionId(index), index + 1])
  const report: UsageReport = { scope: 'session', windowEnd: 1_795_000_020_000, uses }
  const sent = usagePayloads(report)
  assert.ok(sent.length >= 5, `${sent.length} payloads`)
  for (const payload of sent)
    assert.ok(Buffer.byteLength(payload) <= NOTIFY_PAYLOAD_MAX, `${Buffer.byteLength(payload)} bytes`)
  const parsed = sent.map((payload) => parseUsageReport(payload))
  assert.deepEqual(
    parsed.flatMap((part) => part?.uses ?? []),
    uses,
  )
  assert.ok(parsed.every((part) => part?.scope === 'session' && part.windowEnd === report.windowEnd))
  assert.deepEqual(usagePayloads({ ...report, uses: [] }), [])
})

test('a payload that is not a usage report is dropped and reported, a valid one reaches every subscriber', () => {
  const malformed: string[] = []
  const link = createUsageLink(
    () => {},
    (payload) => malformed.push(payload),
  )
  const heard: UsageReport[][] = [[], []]
  link.share.subscribe((report) => heard[0]!.push(report))
  link.share.subscribe((report) => heard[1]!.push(report))
  const bad = [
    'not json',
    '[]',
    JSON.stringify({ scope: 'session', windowEnd: 60_000 }),
    JSON.stringify({ scope: 'session', windowEnd: '60000', uses: [] }),
    JSON.stringify({ scope: 'session', windowEnd: 60_000, uses: [['a', -1]] }),
    JSON.stringify({ scope: 'session', windowEnd: 60_000, uses: [['a', 1.5]] }),
    JSON.stringify({ scope: 'session', windowEnd: 60_000, uses: [[{}, 1]] }),
    JSON.stringify({ scope: 'session', windowEnd: 60_000, uses: [['a', 1, 2]] }),
  ]
  for (const payload of bad) link.receive(payload)
  assert.deepEqual(malformed, bad)
  assert.deepEqual(heard, [[], []])

  const report: UsageReport = {
    scope: 'apiKey',
    windowEnd: 60_000,
    uses: [
      [7, 3],
      ['10.0.0.1', 2],
    ],
  }
  link.receive(JSON.stringify(report))
  assert.deepEqual(heard, [[report], [report]])
})

test('publishing sends each payload of the report', () => {
  const sent: string[] = []
  const link = createUsageLink(
    (payload) => sent.push(payload),
    () => {},
  )
  const report: UsageReport = { scope: 'bandwidth', windowEnd: 60_000, uses: [[sessionId(1), 4096]] }
  link.share.publish(report)
  assert.deepEqual(sent, [JSON.stringify(report)])
})
