import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  createTimetickGenerator,
  isTimetick,
  MAX_TIMETICK,
  parseTimetick,
  TIMETICK_EPOCH,
  timetickAt,
  timetickNode,
  timetickTime,
  timetickToString,
} from './timetick.ts'

test('a burst of a million ids is strictly increasing and every id is a safe integer', () => {
  const next = createTimetickGenerator({ node: 3 })
  let previous = next()
  for (let i = 0; i < 1_000_000; i++) {
    const id = next()
    if (!(id > previous)) assert.fail(`id ${id} after ${previous} is not greater`)
    previous = id
  }
  assert.ok(Number.isSafeInteger(previous))
})

test('two node numbers never produce the same id, even on the same clock', () => {
  const clock = () => Date.UTC(2026, 10, 22, 12)
  const a = createTimetickGenerator({ node: 0, now: clock })
  const b = createTimetickGenerator({ node: 31, now: clock })
  const seen = new Set<number>()
  for (let i = 0; i < 50_000; i++) {
    seen.add(a())
    seen.add(b())
  }
  assert.equal(seen.size, 100_000)
})

test('generators on different lanes of one node never make the same id, even on the same clock', () => {
  const clock = () => Date.UTC(2026, 10, 22, 12)
  const lanes = Array.from({ length: 32 }, (_, index) =>
    createTimetickGenerator({ node: 31, now: clock, lane: { index, count: 32 } }),
  )
  const seen = new Set<number>()
  // Each lane holds 4 ids a millisecond, so 40 each borrow ten milliseconds ahead of the frozen clock.
  for (let i = 0; i < 40; i++) for (const next of lanes) seen.add(next())
  assert.equal(seen.size, 32 * 40)
  for (const id of seen) assert.equal(timetickNode(id), 31)
})

test('a lane borrows the next millisecond when its share is used up, and stays in its lane', () => {
  const wall = Date.UTC(2026, 10, 22, 12)
  const next = createTimetickGenerator({ node: 2, now: () => wall, lane: { index: 5, count: 32 } })
  const ids = Array.from({ length: 9 }, next)
  assert.deepEqual(
    ids.map((id) => timetickTime(id) - wall),
    [0, 0, 0, 0, 1, 1, 1, 1, 2],
  )
  assert.deepEqual(
    ids.map((id) => id % 128),
    [20, 21, 22, 23, 20, 21, 22, 23, 20],
  )
  assert.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]!))
})

test('lanes that are not a power-of-two split of the sequence are refused', () => {
  for (const lane of [
    { index: 0, count: 3 },
    { index: 0, count: 256 },
    { index: 4, count: 4 },
    { index: -1, count: 4 },
    { index: 0.5, count: 4 },
  ]) {
    assert.throws(() => createTimetickGenerator({ node: 0, lane }), RangeError, JSON.stringify(lane))
  }
})

test('ids never go backwards when the wall clock steps back', () => {
  let wall = Date.UTC(2026, 10, 22, 12)
  const next = createTimetickGenerator({ node: 1, now: () => wall })
  const before = next()
  wall -= 60_000
  const after = next()
  assert.ok(after > before)
  assert.equal(timetickTime(after), Date.UTC(2026, 10, 22, 12))
})

test('sequence overflow borrows the next millisecond instead of repeating', () => {
  const wall = Date.UTC(2026, 0, 1)
  const next = createTimetickGenerator({ node: 2, now: () => wall })
  const ids = Array.from({ length: 300 }, next)
  assert.equal(new Set(ids).size, 300)
  assert.equal(timetickTime(ids[127]!), wall)
  assert.equal(timetickTime(ids[128]!), wall + 1)
  assert.equal(timetickTime(ids[299]!), wall + 2)
})

test('the time and node can be read back from an id', () => {
  const wall = Date.UTC(2031, 4, 6, 7, 8, 9, 10)
  const id = createTimetickGenerator({ node: 17, now: () => wall })()
  assert.equal(timetickTime(id), wall)
  assert.equal(timetickNode(id), 17)
  assert.equal(new Date(timetickTime(id)).toISOString(), '2031-05-06T07:08:09.010Z')
})

test('ids of the real clock read back within a few milliseconds of now', () => {
  const before = Date.now()
  const id = createTimetickGenerator({ node: 0 })()
  assert.ok(timetickTime(id) >= before && timetickTime(id) <= Date.now())
})

test('timetickAt is the lower bound of every id made from that millisecond on', () => {
  const wall = Date.UTC(2027, 1, 1)
  const next = createTimetickGenerator({ node: 31, now: () => wall })
  assert.ok(next() >= timetickAt(wall))
  assert.ok(next() < timetickAt(wall + 1))
  assert.equal(timetickAt(TIMETICK_EPOCH - 5), 0)
})

test('node numbers outside 0..31 are refused', () => {
  for (const node of [-1, 32, 1.5, Number.NaN]) {
    assert.throws(() => createTimetickGenerator({ node }), RangeError)
  }
})

test('a clock before 2020 is refused rather than producing a negative id', () => {
  const next = createTimetickGenerator({ node: 0, now: () => Date.UTC(2019, 11, 31) })
  assert.throws(next, /outside/)
})

test('the largest id is Number.MAX_SAFE_INTEGER', () => {
  assert.equal(MAX_TIMETICK, Number.MAX_SAFE_INTEGER)
})

test('ids travel as strings and parse back exactly', () => {
  const id = createTimetickGenerator({ node: 5 })()
  const text = timetickToString(id)
  assert.equal(typeof text, 'string')
  assert.equal(parseTimetick(text), id)
  assert.equal(parseTimetick(String(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER)
})

test('strings that are not timeticks do not parse', () => {
  for (const text of ['', '-1', '01', '1.5', '1e3', ' 12', '0x10', '9007199254740992', 'abc', '12a']) {
    assert.equal(parseTimetick(text), undefined, text)
  }
  assert.equal(isTimetick(-1), false)
  assert.equal(isTimetick(2 ** 53), false)
})
