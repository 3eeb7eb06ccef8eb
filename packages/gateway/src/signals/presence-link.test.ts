import assert from 'node:assert/strict'
import { test } from 'node:test'
import { NOTIFY_PAYLOAD_MAX } from '@atrium/platform'
import { createPresence, PRESENCE_GRACE_MS } from './presence.ts'
import { ALIVE_MS, type PresenceMessage, parsePresence, shareAcrossGateways, stateParts } from './presence-link.ts'

/**
 * Gateway processes joined by an in-memory channel that, like PostgreSQL's, hands every message to
 * every process, the sender's own included; `down` processes hear nothing.
 */
function cluster(count: number) {
  let clock = 1_000_000
  const now = () => clock
  const down = new Set<number>()
  const processes: ReturnType<typeof shareAcrossGateways>[] = []
  for (let index = 0; index < count; index++) {
    const send = (message: PresenceMessage) => {
      // A JSON round trip, as the channel's payloads make.
      const copy = JSON.parse(JSON.stringify(message)) as PresenceMessage
      for (const [other, process] of processes.entries()) if (!down.has(other)) process.receive(copy)
    }
    processes.push(shareAcrossGateways(createPresence({ now }), send, now))
  }
  return {
    processes,
    down,
    advance(ms: number) {
      clock += ms
    },
  }
}

const ALICE = 896_021_546_614_784
const BOB = 896_021_546_614_785

test('a stream on one gateway process makes its person online on the others, until the grace after it closes', () => {
  const { processes, advance } = cluster(3)
  const [one, two, three] = processes as [(typeof processes)[0], (typeof processes)[0], (typeof processes)[0]]
  for (const process of processes) process.joined()
  assert.equal(two.presence.online(ALICE), false)
  one.presence.connected(ALICE)
  one.presence.connected(ALICE)
  assert.equal(two.presence.online(ALICE), true)
  assert.equal(three.presence.online(ALICE), true)
  one.presence.disconnected(ALICE)
  advance(PRESENCE_GRACE_MS + 1)
  assert.equal(two.presence.online(ALICE), true, 'one of two streams is still open')
  one.presence.disconnected(ALICE)
  advance(PRESENCE_GRACE_MS - 1)
  assert.equal(two.presence.online(ALICE), true, 'within the grace')
  advance(2)
  assert.equal(two.presence.online(ALICE), false)
  assert.equal(one.presence.online(ALICE), false)
})

test('a process that joins late learns the streams already open; one that says goodbye stops counting', () => {
  const { processes, down, advance } = cluster(2)
  const [one, two] = processes as [(typeof processes)[0], (typeof processes)[0]]
  down.add(1)
  one.joined()
  one.presence.connected(ALICE)
  assert.equal(two.presence.online(ALICE), false, 'not listening yet')
  down.delete(1)
  two.joined()
  assert.equal(two.presence.online(ALICE), true, 'learnt from the answer to its hello')
  two.presence.connected(BOB)
  assert.equal(one.presence.online(BOB), true)
  one.leave()
  advance(PRESENCE_GRACE_MS + 1)
  assert.equal(two.presence.online(ALICE), false)
  assert.equal(one.presence.online(BOB), true, 'the one that left still hears')
})

test('a process not heard from for three alive periods is forgotten; a missed close is made good at a reconnect', () => {
  const { processes, down, advance } = cluster(2)
  const [one, two] = processes as [(typeof processes)[0], (typeof processes)[0]]
  for (const process of processes) process.joined()
  one.presence.connected(ALICE)
  one.presence.connected(BOB)
  // Two's connection drops: it misses Bob's close, and keeps counting him.
  down.add(1)
  one.presence.disconnected(BOB)
  advance(PRESENCE_GRACE_MS + 1)
  assert.equal(two.presence.online(BOB), true)
  down.delete(1)
  two.joined()
  advance(PRESENCE_GRACE_MS + 1)
  assert.equal(two.presence.online(BOB), false, 'the state one sent after the hello has no Bob')
  assert.equal(two.presence.online(ALICE), true)
  // One stops without a goodbye (a crash): two still counts it while it is heard from …
  for (let period = 0; period < 3; period++) {
    advance(ALIVE_MS)
    one.beat()
    two.beat()
  }
  assert.equal(two.presence.online(ALICE), true)
  // … and forgets it three silent periods later.
  down.add(0)
  for (let period = 0; period < 4; period++) {
    advance(ALIVE_MS)
    two.beat()
  }
  advance(PRESENCE_GRACE_MS + 1)
  assert.equal(two.presence.online(ALICE), false)
})

test('the open streams go in parts that fit a notification', () => {
  const entries = Array.from({ length: 1500 }, (_, index): [number, number] => [ALICE + index, 1 + (index % 3)])
  const parts = stateParts(entries)
  assert.ok(parts.length >= 3, `${parts.length} parts`)
  for (const part of parts) {
    const payload = JSON.stringify({ p: 'a'.repeat(16), state: part, first: false })
    assert.ok(Buffer.byteLength(payload) <= NOTIFY_PAYLOAD_MAX, `${Buffer.byteLength(payload)} bytes`)
  }
  assert.deepEqual(parts.flat(), entries)
  assert.deepEqual(stateParts([]), [[]])
})

test('a notification that is not a presence message is refused', () => {
  assert.deepEqual(parsePresence('{"p":"a1","open":7}'), { p: 'a1', open: 7 })
  assert.deepEqual(parsePresence('{"p":"a1","state":[[7,2]],"first":true}'), { p: 'a1', state: [[7, 2]], first: true })
  for (const payload of [
    'not json',
    'null',
    '{"open":7}',
    '{"p":"a1","open":-7}',
    '{"p":"a1","open":"7"}',
    '{"p":"a1","close":1.5}',
    '{"p":"a1","state":[[7]],"first":true}',
    '{"p":"a1","state":[[7,0]],"first":false}',
    '{"p":"a1","state":[[7,2]]}',
    '{"p":"a1","alive":1}',
  ]) {
    assert.equal(parsePresence(payload), undefined, payload)
  }
})
