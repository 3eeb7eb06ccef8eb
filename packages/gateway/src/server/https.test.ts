import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { Agent } from 'node:https'
import { dirname, join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { createTestDatabaseUrl, until } from '@atrium/platform/testing'
import { generate } from 'selfsigned'
import { createClock, SERVICE_SECRET } from '../../test/support.ts'
import { createTestCertificate, h1Request, h2Connect, h2Request } from '../../test/tls.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'

/**
 * Starts a TLS gateway (a fresh certificate, trusted as `ca`) with a held test route for requests in
 * flight during a shutdown: GET /test/held resolves `entered` and answers once `release` is called.
 */
async function startTlsGateway(t: TestContext, settings: Record<string, unknown> = {}, now?: () => number) {
  const certificate = await createTestCertificate(t)
  const config = loadGatewayConfig(
    {
      GatewayDB: await createTestDatabaseUrl(t, 'sqlite'),
      ServiceSecret: SERVICE_SECRET,
      Tls: { CertFile: certificate.certFile, KeyFile: certificate.keyFile },
      ...settings,
    },
    {},
  )
  const app = await buildGateway(config, { now })
  const entered = Promise.withResolvers<void>()
  const released = Promise.withResolvers<void>()
  app.get('/test/held', async () => {
    entered.resolve()
    await released.promise
    return { released: true }
  })
  t.after(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const release = () => released.resolve()
  return { app, origin: `https://127.0.0.1:${port}`, ca: certificate.cert, entered: entered.promise, release }
}

test('an HTTP/2 client negotiates h2 by ALPN and gets the health endpoint', async (t) => {
  const { origin, ca } = await startTlsGateway(t)
  const session = await h2Connect(t, origin, ca)
  assert.equal(session.alpnProtocol, 'h2')
  const answer = await h2Request(session, '/auth/v1/health')
  assert.equal(answer.status, 200)
  const body = JSON.parse(answer.body)
  assert.equal(body.result.status, 'ok')
  assert.equal(body.result.service, 'gateway')
  assert.equal(answer.headers['x-request-id'], body.id)
})

test('an HTTP/1.1 client on the same port negotiates http/1.1 and gets the health endpoint', async (t) => {
  const { origin, ca } = await startTlsGateway(t)
  const answer = await h1Request(`${origin}/auth/v1/health`, ca)
  assert.equal(answer.alpn, 'http/1.1')
  assert.equal(answer.status, 200)
  assert.equal(JSON.parse(answer.body).result.status, 'ok')
})

test('the domain guard refuses a foreign :authority over HTTP/2 and a foreign Host over HTTPS', async (t) => {
  const { origin, ca } = await startTlsGateway(t)
  const session = await h2Connect(t, origin, ca)
  const h2 = await h2Request(session, '/auth/v1/health', { ':authority': 'evil.example' })
  assert.equal(h2.status, 421)
  assert.equal(JSON.parse(h2.body).error.code, 1007)
  const h1 = await h1Request(`${origin}/auth/v1/health`, ca, { headers: { host: 'evil.example' } })
  assert.equal(h1.status, 421)
  assert.equal(JSON.parse(h1.body).error.code, 1007)
})

test('errors keep the envelope over HTTP/2', async (t) => {
  const { origin, ca } = await startTlsGateway(t)
  const session = await h2Connect(t, origin, ca)
  const answer = await h2Request(session, '/auth/v1/no-such-thing')
  assert.equal(answer.status, 404)
  const body = JSON.parse(answer.body)
  assert.equal(body.error.code, 1004)
  assert.equal(typeof body.id, 'string')
})

test('closing lets an in-flight HTTP/2 request finish and ends the session', async (t) => {
  const { app, origin, ca, entered, release } = await startTlsGateway(t)
  const session = await h2Connect(t, origin, ca)
  const goaway = new Promise((resolve) => session.once('goaway', resolve))
  const sessionClosed = new Promise((resolve) => session.once('close', resolve))
  const inFlight = h2Request(session, '/test/held')
  await entered
  const closed = app.close()
  await goaway
  const released = Date.now()
  release()
  const answer = await inFlight
  assert.equal(answer.status, 200)
  assert.deepEqual(JSON.parse(answer.body).result, { released: true })
  await closed
  await sessionClosed
  assert.ok(session.closed || session.destroyed)
  assert.ok(Date.now() - released < 1_500, 'the close ends as soon as the request is answered')
})

test('closing lets an in-flight HTTPS/1.1 request finish and closes its keep-alive connection', async (t) => {
  const { app, origin, ca, entered, release } = await startTlsGateway(t)
  const agent = new Agent({ keepAlive: true })
  t.after(() => agent.destroy())
  assert.equal((await h1Request(`${origin}/auth/v1/health`, ca, { agent })).status, 200)
  const inFlight = h1Request(`${origin}/test/held`, ca, { agent })
  await entered
  const closed = app.close()
  // The listener closes once the close is under way; the held request answers after that.
  await until(() => !app.server.listening, 'the listener to close')
  const started = Date.now()
  release()
  await Promise.all([closed, inFlight])
  const answer = await inFlight
  assert.equal(answer.status, 200)
  assert.equal(answer.headers.connection, 'close')
  assert.ok(Date.now() - started < 2_000, 'the close does not wait for an idle timeout')
})

test('TLS settings are both or neither, and unreadable files are named at startup', async (t) => {
  const { certFile, keyFile } = await createTestCertificate(t)
  const dir = dirname(certFile)
  assert.throws(
    () => loadGatewayConfig({ ServiceSecret: SERVICE_SECRET, Tls: { CertFile: certFile } }, {}),
    /Tls: CertFile and KeyFile are set together/,
  )
  const config = loadGatewayConfig(
    {
      GatewayDB: await createTestDatabaseUrl(t, 'sqlite'),
      ServiceSecret: SERVICE_SECRET,
      Tls: { CertFile: join(dir, 'missing.pem'), KeyFile: keyFile },
    },
    {},
  )
  await assert.rejects(buildGateway(config), /Tls\.CertFile: cannot read .*missing\.pem \(ENOENT\)/)
  const swapped = { ...config, Tls: { CertFile: keyFile, KeyFile: keyFile } }
  await assert.rejects(buildGateway(swapped), /Tls\.CertFile: .* holds no PEM CERTIFICATE/)
  const otherKey = join(dir, 'other-key.pem')
  await writeFile(otherKey, (await generate([{ name: 'commonName', value: 'other' }], { keyType: 'ec' })).private)
  const mismatched = { ...config, Tls: { CertFile: certFile, KeyFile: otherKey } }
  await assert.rejects(buildGateway(mismatched), /Tls\.KeyFile: .*other-key\.pem does not fit Tls\.CertFile/)
})

test('the connection rate limit counts an HTTP/2 session as one connection', async (t) => {
  const clock = createClock()
  const { origin, ca } = await startTlsGateway(
    t,
    { RateLimits: { Connection: { Requests: 2, WindowSeconds: 10 } } },
    clock.now,
  )
  const session = await h2Connect(t, origin, ca)
  const answers = await Promise.all([1, 2, 3].map(() => h2Request(session, '/auth/v1/health')))
  assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 200, 429])
  const refused = answers.find((answer) => answer.status === 429)!
  assert.equal(refused.headers['retry-after'], '10')
  assert.deepEqual(JSON.parse(refused.body).error.details, { scope: 'connection', retryAfterSeconds: 10 })
  const another = await h2Connect(t, origin, ca)
  assert.equal((await h2Request(another, '/auth/v1/health')).status, 200)
  clock.advance(10_000)
  assert.equal((await h2Request(session, '/auth/v1/health')).status, 200)
})
