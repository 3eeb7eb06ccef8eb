import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createIceGatheringLog } from './ice-report.ts'

/** A clock the test moves. */
function clock(start = 1_000) {
  let now = start
  return {
    now: () => now,
    advance(ms: number) {
      now += ms
    },
  }
}

const host = {
  type: 'host',
  protocol: 'udp',
  address: 'a1b2c3.local',
  port: 50000,
  relatedAddress: null,
  relatedPort: null,
} as const
const srflx = (address: string, port: number) =>
  ({ type: 'srflx', protocol: 'udp', address, port, relatedAddress: '0.0.0.0', relatedPort: 0 }) as const

test("a report lists the candidates, the gateway's mapped address, and the times of the first STUN answer and of gathering", () => {
  const time = clock()
  const log = createIceGatheringLog('chat.example.org', time.now)
  log.candidate(host, null)
  time.advance(30)
  log.candidate(srflx('198.51.100.7', 41000), 'stun:stun.example.net:3478')
  time.advance(5)
  log.candidate(srflx('198.51.100.7', 41002), 'stun:chat.example.org:443')
  log.candidate({ ...srflx('203.0.113.9', 50001), type: 'relay' }, 'turn:turn.example.org:3478?transport=udp')
  time.advance(65)

  assert.deepEqual(log.report(), {
    candidates: [
      { type: 'host', protocol: 'udp', address: 'a1b2c3.local', port: 50000 },
      {
        type: 'srflx',
        protocol: 'udp',
        address: '198.51.100.7',
        port: 41000,
        relatedAddress: '0.0.0.0',
        relatedPort: 0,
        url: 'stun:stun.example.net:3478',
      },
      {
        type: 'srflx',
        protocol: 'udp',
        address: '198.51.100.7',
        port: 41002,
        relatedAddress: '0.0.0.0',
        relatedPort: 0,
        url: 'stun:chat.example.org:443',
      },
      {
        type: 'relay',
        protocol: 'udp',
        address: '203.0.113.9',
        port: 50001,
        relatedAddress: '0.0.0.0',
        relatedPort: 0,
        url: 'turn:turn.example.org:3478?transport=udp',
      },
    ],
    mappedAddress: { address: '198.51.100.7', port: 41002 },
    gatheringMs: 100,
    stunRttMs: 30,
  })
})

test('an IPv6 gateway host in brackets is recognised as the gateway', () => {
  const log = createIceGatheringLog('2001:db8::1', clock().now)
  log.candidate(srflx('2001:db8::99', 5000), 'stun:[2001:db8::1]:8443')
  assert.deepEqual(log.report().mappedAddress, { address: '2001:db8::99', port: 5000 })
})

test('what the gateway would refuse is left out: odd addresses and URLs, control characters, beyond the limits', () => {
  const log = createIceGatheringLog('chat.example.org', clock().now)
  log.candidate({ ...host, address: 'bad address\u0000' }, 'stun:chat.example.org:443\n')
  log.candidate({ ...host, protocol: 'sctp' as 'udp' }, null)
  for (let i = 0; i < 40; i++) log.candidate({ ...host, port: 1000 + i }, null)
  log.error({ url: 'stun:down.example.net:3478', errorCode: 701, errorText: 'STUN host lookup\r\nfailed' })
  log.error({ url: 'http://not-ice', errorCode: 600, errorText: 'x' })
  log.error({ url: 'turn:turn.example.org', errorCode: 401, errorText: 'x'.repeat(500) })
  for (let i = 0; i < 20; i++) log.error({ url: 'stun:s.example.net', errorCode: 5000, errorText: '' })

  const report = log.report()
  assert.deepEqual(report.candidates[0], { type: 'host', protocol: 'udp', port: 50000 })
  assert.equal(report.candidates.length, 32)
  assert.equal(report.mappedAddress, undefined)
  assert.equal(report.stunRttMs, undefined)
  assert.equal(report.errors?.length, 16)
  assert.deepEqual(report.errors?.[0], {
    url: 'stun:down.example.net:3478',
    code: 701,
    text: 'STUN host lookup  failed',
  })
  assert.equal(report.errors?.[1]?.text.length, 200)
  assert.equal(report.errors?.[2]?.code, 999)
})
