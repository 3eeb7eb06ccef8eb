import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { stunClient } from '../../test/stun.ts'
import { createClock, signedInUser, startGateway } from '../../test/support.ts'
import { REPORT_BODY_LIMIT } from './stun.plugin.ts'

const gathered = (port: number) => ({
  candidates: [
    { type: 'host', protocol: 'udp', address: '0b8e6a39-3c3e-4b0f-9d4c-5e7f8a9b0c1d.local', port: 50_000 },
    {
      type: 'srflx',
      protocol: 'udp',
      address: '127.0.0.1',
      port,
      relatedAddress: '0.0.0.0',
      relatedPort: 0,
      url: 'stun:127.0.0.1:8080',
    },
  ],
  mappedAddress: { address: '127.0.0.1', port },
  gatheringMs: 180,
  stunRttMs: 4,
  errors: [{ url: 'turn:turn.example.org:3478?transport=udp', code: 701, text: 'TURN host lookup failed' }],
})

async function post(url: string, headers: Record<string, string>, body: unknown) {
  const response = await fetch(`${url}/auth/v1/stun/report`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: response.status, headers: response.headers, body: await json(response) }
}

async function current(url: string, headers: Record<string, string>) {
  const response = await fetch(`${url}/auth/v1/stun/current`, { headers })
  return { status: response.status, body: await json(response) }
}

forEachDialect(
  'a signed-in client sees the Binding requests this gateway answered from its address, and its own last report',
  async (t, dialect) => {
    const gateway = await startGateway(t, dialect)
    const [bound] = await gateway.app.stun.listening()
    assert.ok(bound)
    const alice = await signedInUser(gateway)
    const bob = await signedInUser(gateway)

    const before = await current(gateway.url, alice.headers)
    assert.equal(before.status, 200)
    assert.deepEqual(before.body.result, {
      address: '127.0.0.1',
      stun: { enabled: true, listening: true, port: bound.port },
      bindings: [],
      report: null,
    })

    const client = await stunClient(t, bound)
    await client.exchange()
    await client.exchange()
    const report = gathered(client.local.port)
    const sent = await post(gateway.url, { ...alice.headers, 'User-Agent': 'Test\tBrowser/1' }, report)
    assert.equal(sent.status, 200)
    assert.deepEqual(sent.body.result.report.report, report)
    assert.equal(sent.body.result.report.userAgent, 'TestBrowser/1', 'control characters are left out')

    const after = await current(gateway.url, alice.headers)
    const { bindings, report: last } = after.body.result
    assert.equal(bindings.length, 2)
    for (const binding of bindings) {
      assert.deepEqual(
        { family: binding.family, address: binding.address, port: binding.port, outcome: binding.outcome },
        { family: 'IPv4', address: '127.0.0.1', port: client.local.port, outcome: 'answered' },
      )
    }
    assert.ok(bindings[0].at >= bindings[1].at, 'newest first')
    assert.deepEqual(last, sent.body.result.report)
    assert.equal(last.ip, '127.0.0.1')

    // Bob shares the address (so sees its bindings) but never Alice's report.
    const bobs = await current(gateway.url, bob.headers)
    assert.equal(bobs.body.result.report, null)
  },
)

forEachDialect('STUN diagnostics need a signed-in person', async (t, dialect) => {
  const gateway = await startGateway(t, dialect)
  const anonymous = await current(gateway.url, {})
  assert.equal(anonymous.status, 401)
  assert.equal(anonymous.body.error.code, 2003)
  const report = await post(gateway.url, { 'Content-Type': 'application/json' }, gathered(1))
  assert.equal(report.status, 401)
  assert.equal(report.body.error.code, 2003)
  assert.equal(await gateway.store.db.selectFrom('stun_reports').selectAll().executeTakeFirst(), undefined)
})

forEachDialect(
  'a report that is malformed, too large or has control characters is refused whole',
  async (t, dialect) => {
    const gateway = await startGateway(t, dialect)
    const alice = await signedInUser(gateway)
    const good = gathered(4000)
    const bad: Record<string, unknown> = {
      'an unknown candidate type': { ...good, candidates: [{ type: 'mdns', protocol: 'udp' }] },
      'an address that is neither IP nor mDNS': {
        ...good,
        candidates: [{ type: 'host', protocol: 'udp', address: 'evil.example.com', port: 1 }],
      },
      'a mapped address that is not an IP': { ...good, mappedAddress: { address: 'x.local', port: 1 } },
      'a port out of range': { ...good, mappedAddress: { address: '127.0.0.1', port: 70_000 } },
      'NUL in an error text': { ...good, errors: [{ url: 'stun:a', code: 701, text: 'bad\u0000text' }] },
      'a URL that is not an ICE server': { ...good, errors: [{ url: 'https://a', code: 1, text: '' }] },
      'an extra field': { ...good, secret: 'x' },
      'too many candidates': { ...good, candidates: Array.from({ length: 33 }, () => good.candidates[1]) },
      'no gathering time': { candidates: [] },
    }
    for (const [what, body] of Object.entries(bad)) {
      const { status, body: answer } = await post(gateway.url, alice.headers, body)
      assert.equal(status, 400, what)
      assert.equal(answer.error.code, 1000, what)
    }
    const malformed = await post(gateway.url, alice.headers, '{"candidates": [')
    assert.equal(malformed.status, 400)
    const oversized = await post(gateway.url, alice.headers, {
      ...good,
      padding: 'x'.repeat(REPORT_BODY_LIMIT),
    })
    assert.equal(oversized.status, 413)
    assert.equal(oversized.body.error.code, 1002)
    assert.equal(await gateway.store.db.selectFrom('stun_reports').selectAll().executeTakeFirst(), undefined)
  },
)

forEachDialect('reports are rate-limited per user and kept within the per-user and age limits', async (t, dialect) => {
  const clock = createClock()
  const gateway = await startGateway(t, dialect, {
    now: clock.now,
    settings: { Stun: { ReportsPerHour: 3, ReportsPerUser: 2, ReportRetentionHours: 1 } },
  })
  const alice = await signedInUser(gateway)
  const bob = await signedInUser(gateway)
  for (const port of [1, 2, 3]) {
    assert.equal((await post(gateway.url, alice.headers, gathered(port))).status, 200)
  }
  const refused = await post(gateway.url, alice.headers, gathered(4))
  assert.equal(refused.status, 429)
  assert.equal(refused.body.error.code, 1011)
  assert.ok(Number(refused.headers.get('retry-after')) >= 1)
  // Another user has their own window.
  assert.equal((await post(gateway.url, bob.headers, gathered(9))).status, 200)

  const rows = () => gateway.store.db.selectFrom('stun_reports').select(['crm_id', 'report']).orderBy('id').execute()
  const ports = (await rows()).map((row) => [row.crm_id, JSON.parse(row.report).mappedAddress.port])
  assert.deepEqual(ports, [
    [alice.crmId, 2],
    [alice.crmId, 3],
    [bob.crmId, 9],
  ])

  // An hour on: a new window, and every report older than an hour goes when the next one arrives.
  clock.advance(3_600_001)
  assert.equal((await post(gateway.url, alice.headers, gathered(5))).status, 200)
  assert.deepEqual(
    (await rows()).map((row) => row.crm_id),
    [alice.crmId],
  )
  assert.equal((await current(gateway.url, bob.headers)).body.result.report, null)
})
