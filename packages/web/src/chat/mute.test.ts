import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isMutedNow, muteText, nextMuteEnd } from './mute.ts'

const HOUR = 3_600_000
// A fixed local noon, so "today" and "within six days" do not depend on when the test runs.
const noon = new Date(2026, 11, 7, 12, 0).getTime()
const at = (ms: number) => new Date(ms).toISOString()

test('a mute is on without an end or before its end, and over once the end passes', () => {
  assert.equal(isMutedNow({ muted: false, muted_until: '' }, noon), false)
  assert.equal(isMutedNow({ muted: true, muted_until: '' }, noon), true)
  assert.equal(isMutedNow({ muted: true, muted_until: at(noon + 1) }, noon), true)
  assert.equal(isMutedNow({ muted: true, muted_until: at(noon) }, noon), false)
  assert.equal(isMutedNow({ muted: true, muted_until: at(noon - HOUR) }, noon), false)
})

test('the next mute end is the earliest end still ahead among chats muted with an end', () => {
  const chat = (muted: boolean, until: number | undefined) => ({
    muted,
    muted_until: until === undefined ? '' : at(until),
  })
  assert.equal(nextMuteEnd([], noon), undefined)
  assert.equal(nextMuteEnd([chat(true, undefined), chat(false, undefined)], noon), undefined, 'no end, or not muted')
  assert.equal(nextMuteEnd([chat(true, noon - HOUR), chat(true, noon)], noon), undefined, 'ended already')
  const ends = [noon + 3 * HOUR, noon + HOUR, noon + 2 * HOUR]
  assert.equal(nextMuteEnd([chat(true, undefined), ...ends.map((end) => chat(true, end))], noon), Math.min(...ends))
  assert.equal(nextMuteEnd([chat(false, noon + 1), chat(true, noon + 2)], noon), noon + 2, 'an unmuted row is skipped')
})

test('the end reads as a time today, a weekday within six days, else a date', () => {
  const time = (ms: number, options: Intl.DateTimeFormatOptions) =>
    new Intl.DateTimeFormat(undefined, options).format(ms)
  const short = { hour: 'numeric', minute: '2-digit' } as const
  assert.equal(muteText({ muted_until: '' }, noon), 'Muted')
  assert.equal(muteText({ muted_until: at(noon + 3 * HOUR) }, noon), `Muted until ${time(noon + 3 * HOUR, short)}`)
  const tomorrow = noon + 24 * HOUR
  assert.equal(
    muteText({ muted_until: at(tomorrow) }, noon),
    `Muted until ${time(tomorrow, { weekday: 'short', ...short })}`,
  )
  const later = noon + 8 * 24 * HOUR
  const dated = time(later, { dateStyle: 'medium', timeStyle: 'short' })
  assert.equal(muteText({ muted_until: at(later) }, noon), `Muted until ${dated}`)
  assert.notEqual(time(tomorrow, { weekday: 'short', ...short }), time(tomorrow, short), 'the weekday is shown')
})
