import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createWakeThrottle } from './wake-throttle.ts'

const LONG = 60_000

test('the first commit after a quiet window wakes a waiting long-poll at once', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const throttle = createWakeThrottle(20)
  t.after(() => throttle.close())
  const woken = throttle.wait(throttle.wakes, LONG)
  throttle.notify()
  await woken
  assert.equal(throttle.wakes, 1)
})

test('a burst of commits within the window gives one trailing wake at its end', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const throttle = createWakeThrottle(20)
  t.after(() => throttle.close())
  throttle.notify()
  const seen = throttle.wakes
  let woken = false
  const waiting = throttle.wait(seen, LONG).then(() => {
    woken = true
  })
  for (let i = 0; i < 10; i++) throttle.notify()
  t.mock.timers.tick(19)
  await Promise.resolve()
  assert.equal(woken, false, 'coalesced until the window ends')
  t.mock.timers.tick(1)
  await waiting
  assert.equal(throttle.wakes, seen + 1, 'one wake for the whole burst')
  t.mock.timers.tick(LONG)
  assert.equal(throttle.wakes, seen + 1, 'no further wake without a further commit')
})

test('a commit at the end of a window is not lost: it gets a wake of its own', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const throttle = createWakeThrottle(20)
  t.after(() => throttle.close())
  throttle.notify()
  throttle.notify()
  t.mock.timers.tick(20)
  assert.equal(throttle.wakes, 2, 'trailing wake')
  const seen = throttle.wakes
  const waiting = throttle.wait(seen, LONG)
  throttle.notify()
  t.mock.timers.tick(20)
  await waiting
  assert.equal(throttle.wakes, seen + 1)
  t.mock.timers.tick(20)
  throttle.notify()
  assert.equal(throttle.wakes, seen + 2, 'after a quiet window the next commit wakes at once')
})

test('a wake during the caller read makes its next wait return at once', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const throttle = createWakeThrottle(20)
  t.after(() => throttle.close())
  const seen = throttle.wakes
  throttle.notify()
  await throttle.wait(seen, LONG)
  assert.equal(throttle.wakes, seen + 1)
})

test('a wait ends when its time is up or its caller goes away, without a wake', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const throttle = createWakeThrottle(20)
  t.after(() => throttle.close())
  const timedOut = throttle.wait(throttle.wakes, 250)
  t.mock.timers.tick(250)
  await timedOut
  const gone = new AbortController()
  const aborted = throttle.wait(throttle.wakes, LONG, gone.signal)
  gone.abort()
  await aborted
  assert.equal(throttle.wakes, 0)
})

test('window 0 wakes at every commit', () => {
  const throttle = createWakeThrottle(0)
  for (let i = 0; i < 3; i++) throttle.notify()
  assert.equal(throttle.wakes, 3)
})
