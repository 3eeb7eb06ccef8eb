import assert from 'node:assert/strict'
import type { ClientHttp2Session } from 'node:http2'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, RouteFlags } from '@atrium/platform'
import { forEachDialect, sendRaw } from '@atrium/platform/testing'
import { startGateway } from '../../test/support.ts'
import { createTestCertificate, h2Connect, h2Request } from '../../test/tls.ts'
import { type Received, startEchoUpstream } from '../../test/upstream.ts'

/**
 * A TLS gateway (HTTP/2 and HTTP/1.1 on one port) with an open catch-all `/` and a RequireSession
 * `/locked/`, both to one echo upstream, so anything that slips past a rule shows up there.
 */
async function startFrontDoor(t: TestContext, dialect: DatabaseDialect) {
  const certificate = await createTestCertificate(t)
  const upstream = await startEchoUpstream(t)
  const gateway = await startGateway(t, dialect, {
    settings: {
      Modules: { echo: upstream.url },
      Tls: { CertFile: certificate.certFile, KeyFile: certificate.keyFile },
    },
  })
  await gateway.store.routes.add({ prefix: '/', upstream: 'echo' })
  await gateway.store.routes.add({ prefix: '/locked/', upstream: 'echo', flags: RouteFlags.RequireSession })
  const origin = gateway.url.replace('http:', 'https:')
  const { port } = new URL(origin)
  return {
    upstream,
    port,
    h2: () => h2Connect(t, origin, certificate.cert),
    /** Raw HTTP/1.1 bytes over TLS, answered as status and parsed envelope. */
    h1: (bytes: string) => sendRaw(origin, bytes, { ca: certificate.cert }).then(parseAnswer),
  }
}

interface Answer {
  status: number
  raw: string
  // biome-ignore lint/suspicious/noExplicitAny: asserted at run time
  body: any
}

function parseAnswer(raw: string): Answer {
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1] ?? 0)
  const text = raw.slice(raw.indexOf('\r\n\r\n') + 4)
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  return { status, raw, body }
}

/** A GET on HTTP/2; a stream the server resets as malformed (RFC 9113 §8.1.1) answers status 0. */
async function h2Get(session: ClientHttp2Session, path: string, headers: Record<string, string> = {}) {
  try {
    const answer = await h2Request(session, path, headers)
    return { status: answer.status, body: JSON.parse(answer.body) }
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_HTTP2_STREAM_ERROR') throw error
    return { status: 0, body: { error: { code: 0 } } }
  }
}

/** Host values that name this build only up to some junk the guard used to ignore (issue 14, item 1). */
const JUNK_HOSTS = [
  'localhost:9101@evil.example',
  'localhost:evil.example',
  'localhost:9101/evil',
  'localhost:9101 evil.example',
  '[::1]evil.example',
  'localhost:99999',
  'localhost:1:2',
  'user@localhost',
  'localhost\\evil.example',
  '127.0.0.1.evil.example:1',
]

forEachDialect('a Host with anything beyond host[:port] is refused on HTTP/1.1 and HTTP/2', async (t, dialect) => {
  const door = await startFrontDoor(t, dialect)
  for (const host of JUNK_HOSTS) {
    const answer = await door.h1(`GET /x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
    assert.ok(answer.status === 400 || answer.status === 421, `${host}: ${answer.raw}`)
    assert.ok([1006, 1007].includes(answer.body.error?.code), `${host}: ${answer.raw}`)
    assert.equal(typeof answer.body.id, 'string')
  }
  const session = await door.h2()
  for (const host of JUNK_HOSTS) {
    const answer = await h2Get(session, '/x', { ':authority': host })
    assert.ok([0, 400, 421].includes(answer.status), `${host} over HTTP/2: ${answer.status}`)
    assert.ok([0, 1006, 1007].includes(answer.body.error.code), host)
  }
  assert.deepEqual(
    door.upstream.received.map((seen) => seen.headers.host),
    [],
    'no junk Host reached the module',
  )
})

forEachDialect('the module receives the Host the guard accepted, in its canonical form', async (t, dialect) => {
  const door = await startFrontDoor(t, dialect)
  const answer = await door.h1(`GET /x HTTP/1.1\r\nHost: LocalHost.:${door.port}\r\nConnection: close\r\n\r\n`)
  assert.equal(answer.status, 200, answer.raw)
  const seen = answer.body as Received
  assert.equal(seen.headers.host, `localhost:${door.port}`)
  assert.equal(seen.headers['x-forwarded-host'], `localhost:${door.port}`)

  const session = await door.h2()
  const viaH2 = await h2Get(session, '/x', { ':authority': '[::1]:443' })
  assert.equal(viaH2.status, 200)
  assert.equal((viaH2.body as Received).headers.host, '[::1]:443')
})

forEachDialect('HTTP/1 requests with no Host or two Host lines get 400 in the envelope', async (t, dialect) => {
  const door = await startFrontDoor(t, dialect)
  const requests = [
    'GET /x HTTP/1.1\r\nConnection: close\r\n\r\n',
    'GET /x HTTP/1.0\r\n\r\n',
    'GET /x HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n',
    'GET /x HTTP/1.1\r\nHost: localhost\r\nhost: localhost\r\nConnection: close\r\n\r\n',
    'GET /x HTTP/1.1\r\nHost: evil.example\r\nHOST: localhost\r\nConnection: close\r\n\r\n',
  ]
  for (const request of requests) {
    const answer = await door.h1(request)
    assert.equal(answer.status, 400, `${JSON.stringify(request)}: ${answer.raw}`)
    assert.equal(answer.body.error.code, 1006, answer.raw)
  }
  assert.equal(door.upstream.received.length, 0)
})

forEachDialect('on HTTP/2 a host header that differs from :authority is refused', async (t, dialect) => {
  const door = await startFrontDoor(t, dialect)
  const session = await door.h2()
  for (const [authority, host] of [
    ['evil.example', 'localhost'],
    ['localhost', 'evil.example'],
    ['localhost', 'localhost:1'],
  ]) {
    const answer = await h2Get(session, '/x', { ':authority': authority!, host: host! })
    assert.equal(answer.status, 400, `${authority} / ${host}`)
    assert.equal(answer.body.error.code, 1006)
  }
  assert.equal(door.upstream.received.length, 0)
  const same = await h2Get(session, '/x', { ':authority': 'localhost', host: 'LOCALHOST' })
  assert.equal(same.status, 200, 'the same host in another case agrees')
})

/** Paths that upstreams which drop `;` parameters (Tomcat, Jetty, Spring) read as protected paths. */
const PARAMETER_PATHS: [string, number][] = [
  ['/private;/v1/users/1', 404],
  ['/private;x=1/v1/users/1', 404],
  ['/PRIVATE;/v1/users/1', 404],
  ['/auth;/v1/health', 404],
  ['/;/private/v1/users/1', 404],
  ['/private%3B/v1/users/1', 404],
  ['/locked;/x', 401],
  ['/locked;jsessionid=1/x', 401],
  ['/locked%3b/x', 401],
  ['/;x/locked/x', 401],
  ['/locked;', 401],
  // Case-insensitive routers (Express by default, ASP.NET) read these as /locked/x too.
  ['/LOCKED/x', 401],
  ['/Locked;v=1/x', 401],
  ['/%4cocked/x', 401],
]

forEachDialect(
  '`;` path parameters or letter case never move a request out of a protected prefix',
  async (t, dialect) => {
    const door = await startFrontDoor(t, dialect)
    const session = await door.h2()
    for (const [path, status] of PARAMETER_PATHS) {
      const answer = await door.h1(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
      assert.equal(answer.status, status, `${path}: ${answer.raw}`)
      const viaH2 = await h2Get(session, path, { ':authority': 'localhost' })
      assert.equal(viaH2.status, status, `${path} over HTTP/2`)
    }
    assert.deepEqual(door.upstream.received, [], 'nothing reached the module')
    const allowed = await h2Get(session, '/open;v=1/x', { ':authority': 'localhost' })
    assert.equal(allowed.status, 200, 'parameters outside protected prefixes pass')
    assert.equal((allowed.body as Received).url, '/open;v=1/x', 'and the module gets the path as sent')
  },
)

forEachDialect(
  'a broken or overlong percent-encoding is BadRequest in the envelope, the URL not echoed',
  async (t, dialect) => {
    const door = await startFrontDoor(t, dialect)
    const session = await door.h2()
    const paths = [
      '/x/%ZZ',
      '/x/%c0%ae',
      '/x/%c0%ae%c0%ae/private',
      '/x/%',
      '/x/%e2%82',
      '/x/%00',
      '/..;/private/v1',
      '/x/%2e%2e/y',
    ]
    for (const path of paths) {
      const target = `${path}?secret=hunter2`
      const answer = await door.h1(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
      assert.equal(answer.status, 400, `${path}: ${answer.raw}`)
      assert.equal(answer.body.error.code, 1006, answer.raw)
      assert.equal(typeof answer.body.id, 'string')
      assert.doesNotMatch(answer.raw, /hunter2|FST_/, 'neither the query nor Fastify’s own code is echoed')
      const viaH2 = await h2Get(session, target, { ':authority': 'localhost' })
      assert.equal(viaH2.status, 400, `${path} over HTTP/2`)
      assert.equal(viaH2.body.error.code, 1006)
    }
    assert.equal(door.upstream.received.length, 0)
  },
)

forEachDialect('only origin-form targets are served: absolute-form and * are refused', async (t, dialect) => {
  const door = await startFrontDoor(t, dialect)
  for (const line of ['GET http://evil.example/x HTTP/1.1', 'GET https://localhost/x HTTP/1.1', 'OPTIONS * HTTP/1.1']) {
    const answer = await door.h1(`${line}\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
    assert.equal(answer.status, 400, `${line}: ${answer.raw}`)
    assert.equal(answer.body.error.code, 1006, answer.raw)
  }
  assert.equal(door.upstream.received.length, 0)
})

forEachDialect('a sign-in start sent as text/plain is UnsupportedMediaType (415/1003)', async (t, dialect) => {
  const { url } = await startGateway(t, dialect)
  const body = JSON.stringify({ email: 'a@example.com' })
  const answer = parseAnswer(
    await sendRaw(
      url,
      `POST /auth/v1/email/start HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ),
  )
  assert.equal(answer.status, 415, answer.raw)
  assert.equal(answer.body.error.code, 1003)
})

/** Framings that two HTTP parsers may read differently (request smuggling); Node refuses each. */
const SMUGGLING = [
  'POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /locked/x HTTP/1.1\r\nHost: localhost\r\n\r\n',
  'POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
  'POST /x HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n',
  'POST /x HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n',
  'POST /x HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n',
  'POST /x HTTP/1.1\r\nHost: localhost\r\n Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'GET /x HTTP/1.1\nHost: localhost\nX: a\rb\n\n',
]

forEachDialect('ambiguous body framings are refused in the envelope and reach no module', async (t, dialect) => {
  const door = await startFrontDoor(t, dialect)
  for (const request of SMUGGLING) {
    const answer = await door.h1(request)
    assert.equal(answer.status, 400, `${JSON.stringify(request)}: ${answer.raw}`)
    assert.equal(answer.body.error.code, 1006, answer.raw)
  }
  assert.equal(door.upstream.received.length, 0)
})
