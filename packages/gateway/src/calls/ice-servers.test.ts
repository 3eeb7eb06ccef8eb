import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import test from 'node:test'
import { forEachDialect, json } from '@atrium/platform/testing'
import { createClock, SERVICE_SECRET, signedInUser, startGateway } from '../../test/support.ts'
import { loadGatewayConfig } from '../config.ts'

const TURN_SECRET = 'coturn-static-auth-secret-for-tests'
const TTL_SECONDS = 600

forEachDialect('a signed-in person gets STUN servers and TURN credentials made for them', async (t, dialect) => {
  const clock = createClock()
  const gateway = await startGateway(t, dialect, {
    now: clock.now,
    settings: {
      PublicOrigin: 'https://chat.example.org',
      Calls: {
        TurnUrls: ['turn:turn.example.org:3478?transport=udp', 'turns:turn.example.org:5349?transport=tcp'],
        TurnSecret: TURN_SECRET,
        TurnTtlSeconds: TTL_SECONDS,
        StunUrls: ['stun:stun.example.org:3478'],
        GatewayStun: true,
        IceTransportPolicy: 'relay',
      },
    },
  })
  const person = await signedInUser(gateway)
  const response = await fetch(`${gateway.url}/auth/v1/call/ice_servers`, { headers: person.headers })
  assert.equal(response.status, 200)
  assert.equal(response.headers.get('cache-control'), 'no-store')
  const { result } = await json(response)
  // The relay checks exactly this: the expiry in the username, the HMAC-SHA1 of it as the password.
  const expiry = Math.floor(clock.now() / 1000) + TTL_SECONDS
  const username = `${expiry}:${person.crmId}`
  assert.deepEqual(result, {
    ice_servers: [
      { urls: ['stun:stun.example.org:3478', 'stun:chat.example.org:443'] },
      {
        urls: ['turn:turn.example.org:3478?transport=udp', 'turns:turn.example.org:5349?transport=tcp'],
        username,
        credential: createHmac('sha1', TURN_SECRET).update(username).digest('base64'),
      },
    ],
    ice_transport_policy: 'relay',
    expires_at: new Date(expiry * 1000).toISOString(),
  })
  // A later request gets credentials with a later expiry.
  clock.advance(60_000)
  const later = await json(await fetch(`${gateway.url}/auth/v1/call/ice_servers`, { headers: person.headers }))
  assert.equal(later.result.ice_servers[1].username, `${expiry + 60}:${person.crmId}`)
})

forEachDialect('without a session there are STUN servers but no TURN credentials', async (t, dialect) => {
  const gateway = await startGateway(t, dialect, {
    settings: {
      Calls: { TurnUrls: ['turn:127.0.0.1:3478'], TurnSecret: TURN_SECRET, StunUrls: ['stun:stun.example.org:3478'] },
    },
  })
  // A guest of an invite has no session: what it sends is the invite and its device.
  const response = await fetch(`${gateway.url}/auth/v1/call/ice_servers`, {
    headers: { 'X-Invite-Code': 'AbCdEf123456', 'X-Device-Guid': 'device-guest-0001' },
  })
  const body = await json(response)
  assert.equal(response.status, 200)
  assert.deepEqual(body.result.ice_servers, [{ urls: ['stun:stun.example.org:3478'] }])
  assert.equal(JSON.stringify(body).includes('turn:'), false)
})

forEachDialect('with nothing configured the list is empty and direct paths are used', async (t, dialect) => {
  const gateway = await startGateway(t, dialect)
  const person = await signedInUser(gateway)
  const { result } = await json(await fetch(`${gateway.url}/auth/v1/call/ice_servers`, { headers: person.headers }))
  assert.deepEqual([result.ice_servers, result.ice_transport_policy], [[], 'all'])
})

test('TURN relays need their secret, and relay-only needs a relay', () => {
  const base = { ServiceSecret: SERVICE_SECRET }
  assert.throws(
    () => loadGatewayConfig({ ...base, Calls: { TurnUrls: ['turn:127.0.0.1:3478'] } }, {}),
    /Calls.TurnSecret/,
  )
  assert.throws(() => loadGatewayConfig({ ...base, Calls: { IceTransportPolicy: 'relay' } }, {}), /IceTransportPolicy/)
  assert.throws(() =>
    loadGatewayConfig({ ...base, Calls: { TurnUrls: ['http://relay'], TurnSecret: TURN_SECRET } }, {}),
  )
})
