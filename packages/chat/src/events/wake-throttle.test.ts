import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { createWakeThrottle } from './wake-throttle.ts'

function counted(t: TestContext, windowMs: number) {
  let wakes = 0
  const throttle = createWakeThrottle(windowMs, () => {
    wakes += 1
  })
  t.after(() => throttle.close())
  return {
    throttle,
    get wakes() {
      return wakes
    },
  }
}

test('the first commit after a quiet window wakes at once', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const counter = counted(t, 20)
  counter.throttle.notify()
  assert.equal(counter.wakes, 1)
})

test('a burst of commits within the window gives one trailing wake at its end', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const counter = counted(t, 20)
  counter.throttle.notify()
  for (let i = 0; i < 10; i++) counter.throttle.notify()
  t.mock.timers.tick(19)
  assert.equal(counter.wakes, 1, 'coalesced until the window ends')
  t.mock.timers.tick(1)
  assert.equal(counter.wakes, 2, 'one wake for the whole burst')
  t.mock.timers.tick(60_000)
  assert.equal(counter.wakes, 2, 'no further wake without a further commit')
})

test('a commit at the end of a window is not lost: it gets a wake of its own', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const counter = counted(t, 20)
  counter.throttle.notify()
  counter.throttle.notify()
  t.mock.timers.tick(20)
  assert.equal(counter.wakes, 2, 'trailing wake')
  counter.throttle.notify()
  t.mock.timers.tick(20)
  assert.equal(counter.wakes, 3, 'a commit in the window the trailing wake opened')
  t.mock.timers.tick(20)
  counter.throttle.notify()
  assert.equal(counter.wakes, 4, 'after a quiet window the next commit wakes at once')
})

test('close cancels a pending trailing wake', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const counter = counted(t, 20)
  counter.throttle.notify()
  counter.throttle.notify()
  counter.throttle.close()
  t.mock.timers.tick(20)
  assert.equal(counter.wakes, 1)
})

test('window 0 wakes at every commit', (t) => {
  const counter = counted(t, 0)
  for (let i = 0; i < 3; i++) counter.throttle.notify()
  assert.equal(counter.wakes, 3)
})
