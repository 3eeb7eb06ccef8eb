import assert from 'node:assert/strict'
import { test } from 'node:test'
import { dayLabel, daysAgo, listTime } from './times.ts'

// Local times, so the expectations hold in any time zone the tests run in.
const now = new Date(2026, 10, 25, 9, 30) // Wednesday 25 November 2026, 09:30

test('days are counted between local midnights, not in 24-hour spans', () => {
  assert.equal(daysAgo(new Date(2026, 10, 25, 0, 1), now), 0)
  assert.equal(daysAgo(new Date(2026, 10, 24, 23, 59), now), 1)
  assert.equal(daysAgo(new Date(2026, 10, 18, 12, 0), now), 7)
})

test('a day separator says Today, Yesterday, the weekday within a week, else the full date', () => {
  assert.equal(dayLabel(new Date(2026, 10, 25, 8, 0), now, 'en-GB'), 'Today')
  assert.equal(dayLabel(new Date(2026, 10, 24, 23, 0), now, 'en-GB'), 'Yesterday')
  assert.equal(dayLabel(new Date(2026, 10, 23, 10, 0), now, 'en-GB'), 'Monday')
  assert.equal(dayLabel(new Date(2026, 10, 19, 10, 0), now, 'en-GB'), 'Thursday')
  assert.equal(dayLabel(new Date(2026, 10, 18, 10, 0), now, 'en-GB'), '18 November 2026')
  assert.equal(dayLabel(new Date(2026, 10, 23, 10, 0), now, 'de-DE'), 'Montag', "in the browser's language")
})

test('a chat list time is the time today, the weekday this week, else the date', () => {
  assert.equal(listTime(new Date(2026, 10, 25, 8, 5), now, 'en-GB'), '08:05')
  assert.equal(listTime(new Date(2026, 10, 24, 8, 5), now, 'en-GB'), 'Tue')
  assert.equal(listTime(new Date(2026, 10, 2, 8, 5), now, 'en-GB'), '02/11/2026')
  assert.equal(listTime(new Date(2026, 10, 2, 8, 5), now, 'en-US'), '11/2/26')
})
