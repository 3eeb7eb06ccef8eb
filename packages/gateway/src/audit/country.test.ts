import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadCountryLookup } from './country.ts'

test('the table loads once per process, however many callers ask at once', async () => {
  const [first, second] = await Promise.all([loadCountryLookup(), loadCountryLookup()])
  assert.equal(first, second)
  assert.equal(await loadCountryLookup(), first)
})

test('public IPv4 addresses answer the country of their range', async () => {
  const lookup = await loadCountryLookup()
  // Rows of the bundled data: 8.8.8.0/24 US, 1.1.1.0/24 AU, 2.40.0.0 IT.
  assert.equal(lookup('8.8.8.8'), 'US')
  assert.equal(lookup('1.1.1.1'), 'AU')
  assert.equal(lookup('1.0.1.7'), 'CN')
  assert.equal(lookup('2.40.0.0'), 'IT')
})

test('a narrower range inside a broader one wins, and the broader one resumes after it', async () => {
  const lookup = await loadCountryLookup()
  // 37405696-37406207 DE contains 37405967 BE: 2.58.199.0/23 DE with 2.58.197.15 BE.
  assert.equal(lookup('2.58.197.14'), 'DE')
  assert.equal(lookup('2.58.197.15'), 'BE')
  assert.equal(lookup('2.58.197.16'), 'DE')
})

test('IPv6 and IPv4-mapped IPv6 addresses are looked up', async () => {
  const lookup = await loadCountryLookup()
  assert.equal(lookup('2001:4860:4860::8888'), 'US')
  assert.equal(lookup('2001:2::1'), 'JP')
  assert.equal(lookup('2001:0200:0000:0000:0000:0000:0000:0001'), 'AU')
  assert.equal(lookup('2A00:1450:4001:800::200E'), 'IE')
  assert.equal(lookup('::ffff:8.8.8.8'), 'US')
  assert.equal(lookup('::ffff:0808:0808'), 'US')
  assert.equal(lookup('::FFFF:1.1.1.1'), 'AU')
})

test('private, loopback, link-local and documentation addresses have no country', async () => {
  const lookup = await loadCountryLookup()
  for (const ip of [
    '10.1.2.3',
    '127.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.0.1',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fd00::1',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ]) {
    assert.equal(lookup(ip), '', ip)
  }
})

test('malformed input answers the empty string', async () => {
  const lookup = await loadCountryLookup()
  for (const ip of [
    '',
    'bogus',
    '1.2.3',
    '256.1.1.1',
    '8.8.8.8 ',
    ' 8.8.8.8',
    '8.8.8.8.8',
    '08.8.8.8x',
    '2001:4860:::1',
    '2001:4860:4860::8888::1',
    '2001:4860:4860:0:0:0:0:8888:1',
    'fe80::1%eth0',
    'g::1',
    `${'1'.repeat(100)}`,
    undefined as unknown as string,
  ]) {
    assert.equal(lookup(ip), '', String(ip))
  }
})
