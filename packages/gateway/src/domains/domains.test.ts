import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { test } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { forEachDialect, json, until } from '@atrium/platform/testing'
import { type DnsAnswer, startDnsPeer } from '../../test/dns-peer.ts'
import { startGateway } from '../../test/support.ts'
import { createDnsCheck } from './dns-check.ts'
import { createProjectDomains, normalizeDomain } from './domains.repository.ts'

async function startWithDns(t: TestContext, dialect: DatabaseDialect, zone: Map<string, DnsAnswer>) {
  const dns = await startDnsPeer(t, zone)
  const gateway = await startGateway(t, dialect, {
    settings: { Dns: { Servers: [dns.server], TimeoutMs: 300, Tries: 1, RecheckSeconds: 0 } },
  })
  const admin = await gateway.store.users.create({ name: 'Admin', scopes: ['admin'] })
  const plain = await gateway.store.users.create({ name: 'Plain', scopes: ['chat'] })
  const issue = async (crmId: number, scopes: string[]) =>
    (await gateway.store.apiKeys.create({ keyType: 'user', crmId, appId: 0, scopes, name: 'test' })).key
  const adminKey = await issue(admin.crm_id, ['admin'])
  const plainKey = await issue(plain.crm_id, ['chat'])
  const call = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}/auth/v1${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    })
  return { ...gateway, dns, zone, adminKey, plainKey, call }
}

forEachDialect('an added domain is pending and verifies once its TXT record holds the token', async (t, dialect) => {
  const zone = new Map<string, DnsAnswer>()
  const { call, adminKey, dns } = await startWithDns(t, dialect, zone)

  const added = await call(adminKey, 'POST', '/domains', { domain: 'Chat.Example.COM.' })
  assert.equal(added.status, 200)
  const { result } = await json(added)
  assert.equal(result.domain, 'chat.example.com')
  assert.equal(result.state, 'pending_verification')
  assert.equal(result.txtName, '_atrium-challenge.chat.example.com')
  assert.match(result.txtValue, /^atrium-verification=[A-Za-z0-9_-]{32}$/)

  // No record yet: NXDOMAIN.
  const missing = await call(adminKey, 'POST', '/domains/verify', { domain: 'chat.example.com' })
  assert.equal(missing.status, 409)
  const missingError = (await json(missing)).error
  assert.equal(missingError.code, 2008)
  assert.match(missingError.message, /no TXT record at _atrium-challenge\.chat\.example\.com/)

  // A record with another value (and an unrelated one) does not verify.
  zone.set('_atrium-challenge.chat.example.com', [['atrium-verification=someone-else'], ['v=spf1 -all']])
  const wrong = await call(adminKey, 'POST', '/domains/verify', { domain: 'chat.example.com' })
  assert.equal(wrong.status, 409)
  assert.match((await json(wrong)).error.message, /does not hold atrium-verification=/)
  const listed = (await json(await call(adminKey, 'GET', '/domains'))).result.domains
  assert.equal(listed[0].state, 'pending_verification')
  assert.match(listed[0].lastError, /does not hold/)
  assert.ok(listed[0].checked > 0)

  // The right value, split over two strings of one record, verifies.
  const value = result.txtValue as string
  zone.set('_atrium-challenge.chat.example.com', [['unrelated'], [value.slice(0, 10), value.slice(10)]])
  const verified = await call(adminKey, 'POST', '/domains/verify', { domain: 'CHAT.example.com' })
  assert.equal(verified.status, 200)
  const view = (await json(verified)).result
  assert.equal(view.state, 'verified')
  assert.equal(view.lastError, '')
  assert.ok(view.verified > 0)
  assert.ok(dns.queries.includes('_atrium-challenge.chat.example.com'))

  // Verified stays verified, and adding again returns the same token.
  zone.delete('_atrium-challenge.chat.example.com')
  const again = await call(adminKey, 'POST', '/domains/verify', { domain: 'chat.example.com' })
  assert.equal((await json(again)).result.state, 'verified')
  const readded = (await json(await call(adminKey, 'POST', '/domains', { domain: 'chat.example.com' }))).result
  assert.equal(readded.txtValue, value)
  assert.equal(readded.state, 'verified')
})

forEachDialect('a name without TXT records and a failing DNS server are reported as such', async (t, dialect) => {
  const zone = new Map<string, DnsAnswer>([
    ['_atrium-challenge.nodata.example', []],
    ['_atrium-challenge.broken.example', 'servfail'],
    ['_atrium-challenge.slow.example', 'silent'],
  ])
  const { call, adminKey } = await startWithDns(t, dialect, zone)
  for (const domain of ['nodata.example', 'broken.example', 'slow.example']) {
    assert.equal((await call(adminKey, 'POST', '/domains', { domain })).status, 200)
  }
  const reasons = new Map<string, string>()
  for (const domain of ['nodata.example', 'broken.example', 'slow.example']) {
    const response = await call(adminKey, 'POST', '/domains/verify', { domain })
    assert.equal(response.status, 409)
    reasons.set(domain, (await json(response)).error.message)
  }
  assert.match(reasons.get('nodata.example')!, /no TXT record/)
  assert.match(reasons.get('broken.example')!, /DNS lookup of _atrium-challenge\.broken\.example failed \(ESERVFAIL\)/)
  assert.match(reasons.get('slow.example')!, /failed \(ETIMEOUT\)/)
  const states = (await json(await call(adminKey, 'GET', '/domains'))).result.domains.map(
    (row: { state: string }) => row.state,
  )
  assert.deepEqual(states, ['pending_verification', 'pending_verification', 'pending_verification'])
})

forEachDialect('only admin callers manage domains, and bad names are refused', async (t, dialect) => {
  const { call, adminKey, plainKey } = await startWithDns(t, dialect, new Map())
  for (const [method, path, body] of [
    ['POST', '/domains', { domain: 'x.example' }],
    ['GET', '/domains', undefined],
    ['POST', '/domains/verify', { domain: 'x.example' }],
  ] as const) {
    const response = await call(plainKey, method, path, body)
    assert.equal(response.status, 403, `${method} ${path}`)
    assert.equal((await json(response)).error.code, 1009)
  }
  const anonymous = await call('', 'GET', '/domains')
  assert.equal(anonymous.status, 401, 'an anonymous caller is told to sign in')
  assert.equal((await json(anonymous)).error.code, 2003)

  for (const domain of ['localhost', '127.0.0.1', 'a..b', '-a.example', 'a_b.example', 'x.123', 'exa mple.com']) {
    const response = await call(adminKey, 'POST', '/domains', { domain })
    assert.equal(response.status, 400, domain)
    assert.equal((await json(response)).error.code, 2070, domain)
  }
  const unknown = await call(adminKey, 'POST', '/domains/verify', { domain: 'never-added.example' })
  assert.equal(unknown.status, 404)
  assert.equal((await json(await call(adminKey, 'GET', '/domains'))).result.domains.length, 0)
})

forEachDialect('the background re-check verifies pending domains', async (t, dialect) => {
  const zone = new Map<string, DnsAnswer>()
  const dns = await startDnsPeer(t, zone)
  const { store } = await startGateway(t, dialect, {
    settings: { Dns: { Servers: [dns.server], TimeoutMs: 300, Tries: 1, RecheckSeconds: 1 } },
  })
  const domains = createProjectDomains(store.db, store.nextTick, store.now)
  const row = await domains.add('late.example')
  zone.set('_atrium-challenge.late.example', [[`atrium-verification=${row.token}`]])
  await until(
    async () => (await domains.get('late.example'))?.state === 'verified',
    'the re-check to verify the domain',
  )
})

test('domain names are normalised to lower-case ASCII without a trailing dot', async () => {
  assert.equal(normalizeDomain(' Example.COM. '), 'example.com')
  assert.equal(normalizeDomain('münchen.example'), 'xn--mnchen-3ya.example')
  assert.throws(() => normalizeDomain(`${'a'.repeat(64)}.example`), /Not a valid domain/)
  assert.throws(() => normalizeDomain('[::1]'), /Not a valid domain/)
})

test('the DNS check reads only the challenge name', async (t) => {
  const zone = new Map<string, DnsAnswer>([['example.org', [['atrium-verification=tok']]]])
  const dns = await startDnsPeer(t, zone)
  const check = createDnsCheck({ servers: [dns.server], timeoutMs: 300, tries: 1 })
  assert.deepEqual(await check('example.org', 'tok'), {
    ok: false,
    reason: 'no TXT record at _atrium-challenge.example.org',
  })
  zone.set('_atrium-challenge.example.org', [['atrium-verification=tok']])
  assert.deepEqual(await check('example.org', 'tok'), { ok: true })
})
