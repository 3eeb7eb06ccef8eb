import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createFixedWindow } from '../rate-limit/fixed-window.ts'
import { createPresence, shareWithWorkers } from '../signals/presence.ts'
import { createNodeMessages, type NodeMessage, type NodeMessages } from './node-messages.ts'

/** Workers of one node wired as the primary wires them: each message reaches every other worker, with its sender. */
function node(count: number): NodeMessages[] {
  const workers: NodeMessages[] = []
  for (let index = 0; index < count; index++) {
    workers.push(
      createNodeMessages((message: NodeMessage) => {
        for (const [other, worker] of workers.entries())
          if (other !== index) worker.receive({ ...message, from: index })
      }),
    )
  }
  return workers
}

test('presence is the node’s: a stream on one worker is seen by the other, and goes with its worker', () => {
  const [a, b] = node(2) as [NodeMessages, NodeMessages]
  const now = { at: 1_000_000 }
  const onA = shareWithWorkers(createPresence({ graceMs: 1000, now: () => now.at }), a)
  const onB = shareWithWorkers(createPresence({ graceMs: 1000, now: () => now.at }), b)
  onA.connected(7)
  onA.connected(7)
  assert.equal(onB.online(7), true)
  onA.disconnected(7)
  assert.equal(onB.online(7), true, 'one of two streams is still open')
  onA.disconnected(7)
  now.at += 1001
  assert.equal(onB.online(7), false, 'past the grace after the last stream closed')

  onA.connected(8)
  assert.equal(onB.online(8), true)
  // The primary tells the others that worker 0 stopped: its streams are gone with it.
  b.receive({ kind: 'gone', from: 0 })
  now.at += 1001
  assert.equal(onB.online(8), false)
})

test('a window counts another worker’s uses of the same clock-aligned window only', () => {
  const now = { at: 10_500 }
  const window = createFixedWindow<string>(3, 10, () => now.at)
  const end = window.windowEnd()
  assert.equal(end, 20_000)
  window.addFrom(end, 's', 2)
  window.addFrom(end - 10_000, 's', 5)
  assert.equal(window.take('s'), 0)
  assert.ok(window.take('s') > 0, 'two from the other worker and one here reach the limit of 3')
})
