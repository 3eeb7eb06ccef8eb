import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import { OutboundRefused, refusedHost, refusedRange, resolveOutbound } from './outbound-address.ts'
import { createOutboundClient, OutboundError } from './outbound-request.ts'

test('loopback, private, link-local and unspecified addresses are refused, public ones are not', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private (unique local)'],
    ['fd12:3456::1', 'private (unique local)'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    // IPv6 forms that carry an IPv4 address are judged by it.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['64:ff9b::c0a8:101', 'private'],
  ]
  for (const [address, range] of refused) assert.equal(refusedRange(address), range, address)
  for (const address of [
    '8.8.8.8',
    '172.32.0.1',
    '172.15.255.255',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
  ]) {
    assert.equal(refusedRange(address), undefined, address)
  }
})

test('a host is refused when any of its addresses is internal', async () => {
  const resolve = async () => [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.7', family: 4 },
  ]
  await assert.rejects(
    resolveOutbound('mixed.example', { allowPrivate: false, resolve }),
    (error: Error) =>
      error instanceof OutboundRefused && /mixed\.example resolves to 10\.0\.0\.7, a private/.test(error.message),
  )
  assert.deepEqual(await resolveOutbound('mixed.example', { allowPrivate: true, resolve }), {
    address: '93.184.216.34',
    family: 4,
  })
  const publicOnly = async () => [{ address: '93.184.216.34', family: 4 }]
  assert.equal(
    (await resolveOutbound('shop.example', { allowPrivate: false, resolve: publicOnly })).address,
    '93.184.216.34',
  )
})

test('names and literals of loopback are refused: localhost, [::1], 0.0.0.0', async () => {
  for (const host of ['localhost', '[::1]', '0.0.0.0', '[::ffff:127.0.0.1]']) {
    await assert.rejects(resolveOutbound(host, { allowPrivate: false }), OutboundRefused, host)
  }
})

test('every spelling of an internal host is refused by name, before any lookup', async () => {
  const refused: [string, string][] = [
    ['localhost.', 'loopback'],
    ['localhost..', 'loopback'],
    ['LocalHost', 'loopback'],
    ['api.localhost.', 'loopback'],
    ['localhost.localdomain', 'loopback'],
    ['ip6-localhost', 'loopback'],
    ['127.1', 'loopback'],
    ['0x7f.0.0.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['2130706433', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['127.0.0.1.', 'loopback'],
    ['10.1', 'private'],
    ['0', 'unspecified'],
    ['169.254.169.254.', 'link-local'],
    ['[::1]', 'loopback'],
    ['[0:0:0:0:0:0:0:1]', 'loopback'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['[0:0:0:0:0:ffff:7f00:1]', 'loopback'],
    ['[::ffff:192.168.0.1]', 'private'],
    ['[64:ff9b::a9fe:a9fe]', 'link-local'],
    ['[FE80::1%25eth0]', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['metadata', 'single-label (local network)'],
    ['', 'not a valid host'],
    ['.', 'not a valid host'],
  ]
  for (const [host, why] of refused) assert.equal(refusedHost(host), why, host)
  for (const host of ['push.example.com', 'Push.Example.COM.', '8.8.8.8', '8.8.8.8.', '[2606:4700:4700::1111]']) {
    assert.equal(refusedHost(host), undefined, host)
  }

  const asked: string[] = []
  const resolve = async (name: string) => {
    asked.push(name)
    return [{ address: '93.184.216.34', family: 4 }]
  }
  for (const [host] of refused) {
    await assert.rejects(resolveOutbound(host, { allowPrivate: false, resolve }), OutboundRefused, host)
  }
  assert.deepEqual(asked, [], 'refused by name, never resolved')
  assert.equal((await resolveOutbound('Push.Example.COM.', { allowPrivate: false, resolve })).address, '93.184.216.34')
  assert.deepEqual(asked, ['push.example.com'])
})

async function receiver(t: TestContext, handle: Parameters<typeof createServer>[1]) {
  const server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  return (server.address() as AddressInfo).port
}

test('the request goes to the address that was checked, with the URL’s host name in Host', async (t) => {
  const hosts: string[] = []
  const port = await receiver(t, (request, response) => {
    hosts.push(String(request.headers.host))
    response.end('ok')
  })
  const resolved: string[] = []
  // `hooks.invalid` resolves nowhere on a real resolver: the connection can only use the checked address.
  const client = createOutboundClient({
    allowPrivateAddresses: true,
    timeoutMs: 2000,
    resolve: async (host) => {
      resolved.push(host)
      return [{ address: '127.0.0.1', family: 4 }]
    },
  })
  t.after(() => client.close())
  const answer = await client.post(`http://hooks.invalid:${port}/hook`, {}, Buffer.from('{}'))
  assert.deepEqual(answer, { status: 200, excerpt: 'ok' })
  assert.deepEqual(hosts, [`hooks.invalid:${port}`])
  assert.deepEqual(resolved, ['hooks.invalid'])
})

test('redirects are not followed and a silent receiver times out', async (t) => {
  let redirectedTo = 0
  const target = await receiver(t, (_request, response) => {
    redirectedTo++
    response.end()
  })
  const port = await receiver(t, (request, response) => {
    if (request.url === '/silent') return
    response.writeHead(307, { location: `http://127.0.0.1:${target}/` }).end()
  })
  const client = createOutboundClient({ allowPrivateAddresses: true, timeoutMs: 300 })
  t.after(() => client.close())
  const answer = await client.post(`http://127.0.0.1:${port}/hook`, {}, Buffer.from('{}'))
  assert.equal(answer.status, 307)
  assert.equal(redirectedTo, 0)
  const started = Date.now()
  await assert.rejects(
    client.post(`http://127.0.0.1:${port}/silent`, {}, Buffer.from('{}')),
    (error: Error) => error instanceof OutboundError && error.failure === 'timeout',
  )
  assert.ok(Date.now() - started < 2000)
})
