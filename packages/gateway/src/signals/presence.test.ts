import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPresence } from './presence.ts'

test('a person is online while a stream is open and for the grace period after the last one closed', () => {
  let now = 1_000
  const presence = createPresence({ graceMs: 15_000, now: () => now })
  assert.equal(presence.online(7), false)
  presence.connected(7)
  presence.connected(7)
  presence.disconnected(7)
  now += 60_000
  assert.equal(presence.online(7), true, 'one of two tabs closed long ago: still online')
  presence.disconnected(7)
  now += 15_000
  assert.equal(presence.online(7), true, 'a reload within the grace period does not flicker')
  presence.connected(7)
  presence.disconnected(7)
  now += 15_001
  assert.equal(presence.online(7), false)
})
