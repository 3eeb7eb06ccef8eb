import assert from 'node:assert/strict'
import test from 'node:test'
import { signedHeaders } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, json, listen, metricValue } from '@atrium/platform/testing'
import { closedPort } from '../test/smtp-peer.ts'
import { createChatClient, SERVICE_SECRET } from '../test/support.ts'
import { buildChat } from './app.ts'
import { loadChatConfig } from './config.ts'

forEachDialect('the metrics need the signed hop; readiness and health do not', async (t, dialect) => {
  const app = await buildChat(
    loadChatConfig({ ChatDB: await createTestDatabaseUrl(t, dialect), ServiceSecret: SERVICE_SECRET }, {}),
  )
  const base = await listen(t, app)
  const url = `${base}/private/v1/metrics`

  const unsigned = await fetch(url)
  assert.equal(unsigned.status, 401)
  assert.doesNotMatch(await unsigned.text(), /atrium_/)
  const forged = await fetch(url, { headers: { 'x-service-auth': `v1.${Date.now()}.${'0'.repeat(64)}` } })
  assert.equal(forged.status, 401)

  const signed = await fetch(url, { headers: signedHeaders(SERVICE_SECRET, 'GET', url) })
  assert.equal(signed.status, 200)
  const text = await signed.text()
  assert.match(text, /^# TYPE atrium_http_request_duration_seconds histogram$/m)
  assert.equal(
    metricValue(text, 'atrium_http_request_duration_seconds_count', { route: '/private/v1/metrics', status: '401' }),
    2,
  )

  const ready = await fetch(`${base}/private/v1/ready`)
  assert.equal(ready.status, 200)
  assert.deepEqual((await json(ready)).result, { status: 'ready', checks: { database: 'up' } })
})

test('failed deliveries are counted by channel', async (t) => {
  const config = loadChatConfig(
    {
      ChatDB: await createTestDatabaseUrl(t, 'sqlite'),
      ServiceSecret: SERVICE_SECRET,
      SmtpSettings: { Host: '127.0.0.1', Port: await closedPort(), Username: 'u', Password: 'p' },
      Metrics: { Listen: true, Port: 0 },
    },
    {},
  )
  const app = await buildChat(config)
  const chat = createChatClient(await listen(t, app))
  const scrape = async () => (await fetch(`http://127.0.0.1:${app.metrics.listenerAddress()?.port}/metrics`)).text()
  const before = await scrape()
  const attempts = 3
  for (let index = 0; index < attempts; index++) {
    const response = await chat.call(
      'POST',
      '/private/v1/SendEmailOTP',
      {},
      { email: 'leo@example.com', code: '123456' },
    )
    assert.equal(response.status, 502)
  }
  const after = await scrape()
  const failures = (text: string, channel: string) => metricValue(text, 'atrium_delivery_failures_total', { channel })
  assert.equal(failures(after, 'email') - failures(before, 'email'), attempts)
  assert.equal(failures(after, 'sms'), 0)
})
