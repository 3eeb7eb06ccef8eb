import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createLimitGrants, type LimitPeer } from './limit-grants.ts'
import { createLimitLink, type NodeWindow } from './node-window.ts'

const WINDOW_SECONDS = 60

/**
 * A primary and its workers wired as server/workers.ts wires them, each message delivered later
 * (as over IPC) and in order; `stop(index)` makes a worker deaf, as a dead process.
 */
function node(count: number, limit: number, clock: { at: number }) {
  const grants = createLimitGrants(count)
  return Array.from({ length: count }, () => {
    let alive = true
    const peer: LimitPeer = {
      send: (message) => setImmediate(() => alive && link.receive(structuredClone(message))),
    }
    const link = createLimitLink((message) =>
      setImmediate(() => alive && grants.receive(peer, structuredClone(message))),
    )
    const window: NodeWindow<string> = link.window('session', limit, WINDOW_SECONDS, () => clock.at)
    return {
      window,
      die() {
        alive = false
        return () => grants.gone(peer)
      },
    }
  })
}

/** The Retry-After a refusal in the window of `window` answers now. */
const retryAfter = (window: NodeWindow<string>, clock: { at: number }) =>
  Math.ceil((window.windowEnd() - clock.at) / 1000)

test('the node admits exactly the limit whichever worker takes each request, taking back what a worker holds unused', async () => {
  const clock = { at: 1_000_000 }
  const [a, b] = node(2, 5, clock).map((worker) => worker.window) as [NodeWindow<string>, NodeWindow<string>]
  assert.equal(await a.take('s'), 0)
  // The rest go to b, the last of them only once a gave back the allowance it was not using.
  for (let request = 2; request <= 5; request++) assert.equal(await b.take('s'), 0, `request ${request}`)
  assert.equal(await b.take('s'), retryAfter(b, clock))
  assert.equal(await a.take('s'), retryAfter(a, clock))
  clock.at += WINDOW_SECONDS * 1000
  assert.equal(await a.take('s'), 0, 'the next window starts afresh')
})

test('bytes past a worker’s allowance count for the node before they go on: the next request is refused on every worker', async () => {
  const clock = { at: 1_000_000 }
  const limit = 20_000
  const [a, b] = node(2, limit, clock).map((worker) => worker.window) as [NodeWindow<string>, NodeWindow<string>]
  // Both admit a request of the key and hold an allowance for it.
  assert.equal(await a.take('ip', 0), 0)
  assert.equal(await b.take('ip', 0), 0)
  await a.add('ip', limit + 1)
  assert.equal(await b.take('ip', 0), retryAfter(b, clock), 'b gave back its allowance before a went on')
  assert.equal(await a.take('ip', 0), retryAfter(a, clock))
})

test('a worker that dies keeps what it held counted until the window ends; the key goes on for the others', async () => {
  const clock = { at: 1_000_000 }
  const [a, b] = node(2, 5, clock)
  assert.equal(await a!.window.take('s'), 0)
  const gone = a!.die()
  // b takes what is left; then the primary asks the dead a for its allowance, until it learns a is gone.
  const answers: number[] = []
  for (let request = 0; request < 3; request++) answers.push(await b!.window.take('s'))
  const waiting = b!.window.take('s')
  gone()
  assert.deepEqual([...answers, await waiting], [0, 0, 0, retryAfter(b!.window, clock)])
})
