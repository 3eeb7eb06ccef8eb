import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import Fastify from 'fastify'
import { startBackgroundSweep } from './background-sweep.ts'

/** A sweep whose runs end when the test says so. */
function controlledSweep(fail = false) {
  const runs: (() => void)[] = []
  return {
    runs,
    sweep: () =>
      new Promise<void>((resolve, reject) => {
        runs.push(() => (fail ? reject(new Error('disk full')) : resolve()))
      }),
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

test('a background sweep runs every period, never two at once, and a close waits for the one under way', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] })
  const app = Fastify()
  const { runs, sweep } = controlledSweep()
  startBackgroundSweep(app, 1000, 'test sweep', sweep)
  await app.ready()

  t.mock.timers.tick(1000)
  assert.equal(runs.length, 1)
  t.mock.timers.tick(5000)
  assert.equal(runs.length, 1, 'no second run while the first is under way')
  runs[0]!()
  await settle()
  t.mock.timers.tick(1000)
  assert.equal(runs.length, 2, 'the next period runs again')

  let closed = false
  const closing = app.close().then(() => {
    closed = true
  })
  await settle()
  assert.equal(closed, false, 'the close waits for the run under way')
  runs[1]!()
  await closing
  t.mock.timers.tick(5000)
  assert.equal(runs.length, 2, 'no run after the close')
})

test('a failed sweep is logged under its name, and the next period runs again', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] })
  const lines: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  const app = Fastify({ logger: { level: 'error', stream } })
  t.after(() => app.close())
  const { runs, sweep } = controlledSweep(true)
  startBackgroundSweep(app, 1000, 'test sweep', sweep)
  await app.ready()
  t.mock.timers.tick(1000)
  runs[0]!()
  await settle()
  const logged = lines.map((line) => JSON.parse(line) as { msg: string; err?: { message: string } })
  assert.deepEqual(
    logged.map(({ msg, err }) => [msg, err?.message]),
    [['test sweep failed', 'disk full']],
  )
  t.mock.timers.tick(1000)
  assert.equal(runs.length, 2)
  runs[1]!()
})
