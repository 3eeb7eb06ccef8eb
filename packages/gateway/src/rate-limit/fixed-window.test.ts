import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createFixedWindow, MAX_KEYS_PER_WINDOW } from './fixed-window.ts'

test('a window keeps only its own keys: rolling over drops every count', () => {
  let now = 1_000_000
  const window = createFixedWindow<string>(2, 60, () => now)
  for (let i = 0; i < 1000; i++) window.take(`key-${i}`)
  assert.equal(window.size, 1000)
  now += 60_000
  assert.equal(window.take('key-0'), 0)
  assert.equal(window.size, 1, 'the previous window is gone once the next one starts')
})

test('retry-after is rounded up to whole seconds and is at least one', () => {
  let now = 120_000
  const window = createFixedWindow<string>(1, 60, () => now)
  assert.equal(window.take('a'), 0)
  assert.equal(window.take('a'), 60)
  now += 59_001
  assert.equal(window.take('a'), 1)
  now += 998
  assert.equal(window.take('a'), 1)
  now += 1
  assert.equal(window.take('a'), 0)
})

test('past the key bound, new keys pass uncounted and known keys are still limited', () => {
  const window = createFixedWindow<number>(1, 60, () => 0)
  for (let i = 0; i < MAX_KEYS_PER_WINDOW; i++) window.take(i)
  assert.equal(window.size, MAX_KEYS_PER_WINDOW)
  assert.equal(window.take(-1), 0)
  assert.equal(window.take(-1), 0)
  assert.equal(window.size, MAX_KEYS_PER_WINDOW)
  assert.equal(window.take(0), 60)
})
