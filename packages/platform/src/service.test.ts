import assert from 'node:assert/strict'
import { once } from 'node:events'
import { type AddressInfo, connect } from 'node:net'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { Type } from 'typebox'
import { ApiError } from './errors.ts'
import { createService } from './service.ts'
import { json, listen, requestWithHeaders, sendRaw } from './testing/http.ts'

function createTestService() {
  const app = createService({
    name: 'test',
    version: '1.2.3',
    healthPath: '/private/v1/health',
    domainGuard: { domain: null, devHost: 'dev.atrium.test' },
    logger: false,
    bodyLimit: 1024,
  })
  app.post(
    '/echo',
    {
      schema: {
        body: Type.Object({ text: Type.String({ maxLength: 20 }), count: Type.Integer({ minimum: 1 }) }),
        response: { 200: Type.Object({ text: Type.String(), count: Type.Integer() }) },
      },
    },
    async (request) => request.body,
  )
  app.get('/conflict', async () => {
    throw new ApiError('Conflict', 'chat 42 is archived')
  })
  app.get('/crash', async () => {
    throw new Error('password=hunter2 at db.internal:5432')
  })
  return app
}

test('a result is wrapped in the envelope with the request id', async (t) => {
  const base = await listen(t, createTestService())
  const response = await fetch(`${base}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'hi', count: 2 }),
  })
  assert.equal(response.status, 200)
  const body = await json(response)
  assert.match(body.id, /^[0-9a-f-]{36}$/)
  assert.deepEqual(body, { result: { text: 'hi', count: 2 }, id: response.headers.get('x-request-id') })
})

test('a well-formed X-Request-Id is echoed, a malformed one is replaced', async (t) => {
  const base = await listen(t, createTestService())
  const echoed = await fetch(`${base}/private/v1/health`, { headers: { 'x-request-id': 'trace-42.a:b' } })
  assert.equal((await json(echoed)).id, 'trace-42.a:b')
  for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
    const replaced = await fetch(`${base}/private/v1/health`, { headers: { 'x-request-id': bad } })
    const { id } = await json(replaced)
    assert.notEqual(id, bad)
    assert.equal(replaced.headers.get('x-request-id'), id)
  }
})

test('a schema failure is InvalidRequest with details', async (t) => {
  const base = await listen(t, createTestService())
  const response = await fetch(`${base}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'req-1' },
    body: JSON.stringify({ text: 'x'.repeat(21), count: 0 }),
  })
  assert.equal(response.status, 400)
  const body = await json(response)
  assert.equal(body.error.code, 1000)
  assert.equal(body.id, 'req-1')
  assert.match(body.error.message, /^body\/(text|count) /)
  assert.ok(Array.isArray(body.error.details) && body.error.details.length >= 1)
  assert.equal(body.result, undefined)
})

test('bad JSON, empty JSON, a wrong media type and an oversized body get their own codes', async (t) => {
  const base = await listen(t, createTestService())
  const post = (body: string, type = 'application/json') =>
    fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': type }, body })
  const cases: [Promise<Response>, number, number][] = [
    [post('{"text": "hi",'), 400, 1001],
    [post(''), 400, 1001],
    [post('text=hi', 'application/x-www-form-urlencoded'), 415, 1003],
    [post('{"text":"hi","count":1}', 'text/plain'), 415, 1003],
    [post('{"text":"hi","count":1}', 'text/plain; charset=utf-8'), 415, 1003],
    [post(JSON.stringify({ text: 'x'.repeat(2000), count: 1 })), 413, 1002],
  ]
  for (const [pending, status, code] of cases) {
    const response = await pending
    assert.equal(response.status, status)
    const body = await json(response)
    assert.equal(body.error.code, code)
    assert.equal(typeof body.error.message, 'string')
    assert.equal(typeof body.id, 'string')
  }
})

test('an unknown route answers NotFound in the envelope', async (t) => {
  const base = await listen(t, createTestService())
  const response = await fetch(`${base}/nowhere?secret=1`)
  assert.equal(response.status, 404)
  const body = await json(response)
  assert.deepEqual(body.error, { code: 1004, message: 'No route for GET /nowhere' })
})

test('an ApiError answers its status, code and message', async (t) => {
  const base = await listen(t, createTestService())
  const response = await fetch(`${base}/conflict`)
  assert.equal(response.status, 409)
  assert.deepEqual((await json(response)).error, { code: 1010, message: 'chat 42 is archived' })
})

test('an unexpected exception is Internal and never leaks its message', async (t) => {
  const base = await listen(t, createTestService())
  const response = await fetch(`${base}/crash`)
  assert.equal(response.status, 500)
  const text = await response.text()
  assert.doesNotMatch(text, /hunter2|db\.internal/)
  assert.equal(JSON.parse(text).error.code, 1099)
})

test('oversized headers get HeadersTooLarge in the envelope before any route runs', async (t) => {
  const base = await listen(t, createTestService())
  const answer = await sendRaw(
    base,
    `GET /private/v1/health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
  )
  assert.match(answer, /^HTTP\/1\.1 431 /)
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
  assert.equal(body.error.code, 1005)
  assert.equal(typeof body.id, 'string')
})

test('a malformed HTTP request gets BadRequest in the envelope', async (t) => {
  const base = await listen(t, createTestService())
  const answer = await sendRaw(base, 'GET /private/v1/health HTTP/1.1\r\nHost localhost\r\n\r\n')
  assert.match(answer, /^HTTP\/1\.1 400 /)
  assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code, 1006)
})

test('a request without Host, with two, or with junk after the port gets BadRequest in the envelope', async (t) => {
  const base = await listen(t, createTestService())
  for (const head of [
    'GET /private/v1/health HTTP/1.1\r\n',
    'GET /private/v1/health HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\n',
    'GET /private/v1/health HTTP/1.1\r\nHost: localhost:80@evil.example\r\n',
    'GET /private/v1/%ZZ?key=hunter2 HTTP/1.1\r\nHost: localhost\r\n',
  ]) {
    const answer = await sendRaw(base, `${head}Connection: close\r\n\r\n`)
    assert.match(answer, /^HTTP\/1\.1 400 /, head)
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
    assert.equal(body.error.code, 1006, head)
    assert.doesNotMatch(answer, /hunter2/)
  }
})

test('the health endpoint reports the version and a development build', async (t) => {
  const base = await listen(t, createTestService())
  const { result } = await json(await fetch(`${base}/private/v1/health`))
  assert.equal(result.status, 'ok')
  assert.equal(result.service, 'test')
  assert.equal(result.version, '1.2.3')
  assert.equal(result.build, 'development')
})

test('a service logs its name, version and build when it starts', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)))
      done()
    },
  })
  const app = createService({
    name: 'logged',
    version: '2.0.0-rc.1',
    healthPath: '/private/v1/health',
    domainGuard: { domain: null, devHost: '' },
    logger: { level: 'info', stream },
  })
  await listen(t, app)
  const started = lines.find((line) => line.msg === 'logged 2.0.0-rc.1 starting')
  assert.ok(started, JSON.stringify(lines))
  assert.equal(started.version, '2.0.0-rc.1')
  assert.equal(started.build, 'development')
})

test('a development build answers the sentinels and the dev host, and refuses other hosts', async (t) => {
  const base = await listen(t, createTestService())
  for (const host of [
    'localhost',
    'localhost:8080',
    '127.0.0.1:9',
    '[::1]:8080',
    'dev.atrium.test',
    'DEV.atrium.test.',
  ]) {
    const response = await requestWithHeaders(`${base}/private/v1/health`, { headers: { host } })
    assert.equal(response.status, 200, host)
  }
  for (const host of ['example.com', 'localhost.evil.com', 'evil.dev.atrium.test', '10.0.0.1']) {
    const response = await requestWithHeaders(`${base}/private/v1/health`, { headers: { host } })
    assert.equal(response.status, 421, host)
    assert.equal(JSON.parse(response.body).error.code, 1007)
  }
})

test('closing drops connections that never sent a request and lets an in-flight request finish', async () => {
  const app = createTestService()
  // The request stays in flight until the test lets it answer.
  const entered = Promise.withResolvers<void>()
  const release = Promise.withResolvers<void>()
  app.get('/slow', async () => {
    entered.resolve()
    await release.promise
    return { done: true }
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  // A pooled client's spare connection: open, silent. Node's idle-connection close skips it.
  const silent = connect(port, '127.0.0.1')
  await once(silent, 'connect')
  const silentClosed = once(silent, 'close')
  const inFlight = fetch(`http://127.0.0.1:${port}/slow`, { headers: { host: 'dev.atrium.test' } })
  await entered.promise

  const closing = app.close()
  await silentClosed
  release.resolve()
  const response = await inFlight
  assert.equal(response.status, 200)
  assert.deepEqual((await json(response)).result, { done: true })
  // Without the drop, the close would wait for the silent connection's headers timeout (60 s).
  await closing
})

test('a device GUID in the query never reaches the request log', async (t) => {
  const lines: string[] = []
  const app = createService({
    name: 'test',
    version: '1.2.3',
    healthPath: '/private/v1/health',
    domainGuard: { domain: null, devHost: 'dev.atrium.test' },
    logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } },
  })
  app.get('/stream', async () => ({ ok: true }))
  const base = await listen(t, app)
  const response = await fetch(`${base}/stream?code=Invite123&device_guid=secret-device-0001&since=5`)
  assert.equal(response.status, 200)
  const logged = lines.map((line) => JSON.parse(line) as { req?: { url: string } }).find((line) => line.req)
  assert.equal(logged?.req?.url, '/stream?code=Invite123&device_guid=[redacted]&since=5')
  assert.ok(!lines.join('').includes('secret-device-0001'), lines.join(''))
})
