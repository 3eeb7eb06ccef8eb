import assert from 'node:assert/strict'
import { test } from 'node:test'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, requestWithHeaders } from '@atrium/platform/testing'
import { startGateway } from '../../test/support.ts'
import { type Received, startEchoUpstream } from '../../test/upstream.ts'
import { createClientAddress, createTrustedProxies } from './client-address.ts'

test('X-Forwarded-For is read only from trusted proxies, right to left', () => {
  const address = createClientAddress(['10.0.0.0/8', '::1'])
  assert.deepEqual(address('198.51.100.7', '1.2.3.4'), {
    ip: '198.51.100.7',
    forwardedFor: '198.51.100.7',
    trustedPeer: false,
  })
  assert.deepEqual(address('10.1.2.3', '6.6.6.6, 8.8.8.8, 10.9.9.9'), {
    ip: '8.8.8.8',
    forwardedFor: '6.6.6.6, 8.8.8.8, 10.9.9.9, 10.1.2.3',
    trustedPeer: true,
  })
  assert.equal(address('::ffff:10.0.0.1', '8.8.4.4').ip, '8.8.4.4', 'IPv4-mapped peers count as IPv4')
  assert.equal(address('::1', undefined).ip, '::1')
  assert.equal(address('10.0.0.1', 'garbage, 10.0.0.2').ip, '10.0.0.2', 'an unparsable hop ends the walk')
  assert.throws(() => createTrustedProxies(['10.0.0.0/33']), /prefix/)
  assert.throws(() => createTrustedProxies(['nonsense']), /not an IP/)
})

async function startForwarding(
  t: Parameters<Parameters<typeof forEachDialect>[1]>[0],
  dialect: 'sqlite' | 'postgres',
  trusted: string[],
) {
  const upstream = await startEchoUpstream(t)
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { echo: upstream.url }, Proxy: { TrustedProxies: trusted } },
  })
  await gateway.store.routes.add({ prefix: '/echo/', upstream: 'echo' })
  return gateway
}

const FORWARDED = {
  'X-Forwarded-For': '8.8.8.8',
  'X-Forwarded-Proto': 'https',
  'X-Forwarded-Host': 'spoofed.example',
  'X-Real-IP': '9.9.9.9',
  Forwarded: 'for=9.9.9.9',
}

forEachDialect('an untrusted peer cannot forge its address or forwarding headers', async (t, dialect) => {
  const gateway = await startForwarding(t, dialect, [])
  const response = await requestWithHeaders(`${gateway.url}/echo/x`, { headers: FORWARDED })
  const seen: Received = JSON.parse(response.body)
  assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1')
  assert.equal(seen.headers['x-forwarded-proto'], 'http')
  assert.equal(seen.headers['x-forwarded-host'], new URL(gateway.url).host)
  assert.equal(seen.headers['x-real-ip'], undefined)
  assert.equal(seen.headers.forwarded, undefined)
  assert.equal(seen.headers['x-country'], undefined, 'the country is of the real peer (loopback: none)')
})

forEachDialect('a trusted proxy forwards the client address, which also gives the country', async (t, dialect) => {
  const gateway = await startForwarding(t, dialect, ['127.0.0.0/8'])
  const headers = { ...FORWARDED, 'X-Forwarded-Host': 'localhost:8443' }
  const response = await requestWithHeaders(`${gateway.url}/echo/x`, { headers })
  assert.equal(response.status, 200, response.body)
  const seen: Received = JSON.parse(response.body)
  assert.equal(seen.headers['x-forwarded-for'], '8.8.8.8, 127.0.0.1')
  assert.equal(seen.headers['x-forwarded-proto'], 'https')
  assert.equal(seen.headers['x-forwarded-host'], 'localhost:8443')
  assert.match(String(seen.headers['x-country']), /^[A-Z]{2}$/, 'looked up for 8.8.8.8, not for the proxy')

  const misdirected = await requestWithHeaders(`${gateway.url}/echo/x`, { headers: FORWARDED })
  assert.equal(misdirected.status, 421, 'a forwarded host the gateway does not serve is refused')
  assert.equal(JSON.parse(misdirected.body).error.code, errorCodes.MisdirectedHost.code)
})
