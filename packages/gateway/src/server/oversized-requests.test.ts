import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { test } from 'node:test'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json, sendRaw } from '@atrium/platform/testing'
import { startSignInWorld } from '../../test/sign-in.ts'
import { startGateway } from '../../test/support.ts'
import { createTestCertificate, h2Connect, h2Request } from '../../test/tls.ts'
import { startEchoUpstream } from '../../test/upstream.ts'

const MIB = 1024 * 1024

/**
 * POSTs a JSON body in 64 KiB chunks with `Transfer-Encoding: chunked` (no declared length), and
 * resolves with the answer even when the gateway answers before the whole body was sent.
 */
function postChunked(url: string, body: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    })
    request.on('response', (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }))
    })
    // The gateway may close the connection once it has answered; the answer is what counts.
    request.on('error', (error) => (request.writableEnded ? undefined : reject(error)))
    let offset = 0
    const writeMore = () => {
      while (offset < body.length) {
        const chunk = body.slice(offset, offset + 65_536)
        offset += chunk.length
        if (!request.write(chunk)) return void request.once('drain', writeMore)
      }
      request.end()
    }
    writeMore()
  })
}

forEachDialect('an oversized body to a gateway route gets the 413 envelope and writes nothing', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const { cookie, csrf } = await world.signIn('big@example.com')
  const sent = world.smtp.received.length
  const padding = 'a'.repeat(MIB + 1)
  const cases: [string, string, Record<string, string>][] = [
    ['/auth/v1/email/start', JSON.stringify({ email: 'victim@example.com', returnTo: `/${padding}` }), {}],
    ['/auth/v1/keys', JSON.stringify({ name: padding }), { cookie, 'x-csrf-token': csrf }],
    ['/auth/v1/app/login', JSON.stringify({ appId: '1', secret: padding }), {}],
  ]
  for (const [path, body, headers] of cases) {
    const declared = await fetch(`${world.url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    })
    assert.equal(declared.status, 413, `${path} with Content-Length`)
    const envelope = await json(declared)
    assert.equal(envelope.error.code, errorCodes.PayloadTooLarge.code)
    assert.equal(envelope.id, declared.headers.get('x-request-id'))

    const chunked = await postChunked(`${world.url}${path}`, body, headers)
    assert.equal(chunked.status, 413, `${path} chunked`)
    assert.equal(JSON.parse(chunked.body).error.code, errorCodes.PayloadTooLarge.code)
  }
  assert.equal(world.smtp.received.length, sent, 'no code was mailed')
  const { db } = world.store
  assert.equal((await db.selectFrom('api_keys').select('id').execute()).length, 0, 'no key was made')
  const audited = await db.selectFrom('login_audit').select('method').orderBy('id').execute()
  assert.deepEqual(
    audited.map((row) => row.method),
    ['email_otp_start', 'email_otp'],
    'only the sign-in above was audited',
  )
})

forEachDialect('oversized headers get the 431 envelope and never reach a module', async (t, dialect) => {
  const upstream = await startEchoUpstream(t)
  const gateway = await startGateway(t, dialect, { settings: { Modules: { echo: upstream.url } } })
  await gateway.store.routes.add({ prefix: '/echo/', upstream: 'echo' })
  const manySmall = Array.from({ length: 40 }, (_, i) => `X-Filler-${i}: ${'v'.repeat(500)}\r\n`).join('')
  const bigCookie = `Cookie: ${gateway.config.Sessions.CookieName}=${'c'.repeat(20_000)}\r\n`
  for (const [path, headers] of [
    ['/echo/x', manySmall],
    ['/echo/x', bigCookie],
    ['/auth/v1/session', bigCookie],
  ]) {
    const answer = await sendRaw(gateway.url, `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n`)
    assert.match(answer, /^HTTP\/1.1 431 /, path)
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
    assert.equal(body.error.code, errorCodes.HeadersTooLarge.code)
    assert.equal(typeof body.id, 'string')
  }
  assert.equal(upstream.received.length, 0)
})

test('over HTTP/2 oversized headers are refused before any route runs', async (t) => {
  const certificate = await createTestCertificate(t)
  const upstream = await startEchoUpstream(t)
  const gateway = await startGateway(t, 'sqlite', {
    settings: {
      Modules: { echo: upstream.url },
      Tls: { CertFile: certificate.certFile, KeyFile: certificate.keyFile },
    },
  })
  await gateway.store.routes.add({ prefix: '/echo/', upstream: 'echo' })
  const origin = gateway.url.replace('http:', 'https:')

  for (const headers of [
    { 'x-big': 'a'.repeat(20_000) },
    Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-filler-${i}`, 'v'.repeat(500)])),
  ]) {
    const session = await h2Connect(t, origin, certificate.cert)
    // Node's HTTP/2 layer answers a bare 431 itself, before Fastify sees the stream.
    assert.equal((await h2Request(session, '/echo/x', headers)).status, 431)
  }
  const tooMany = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x-h-${i}`, 'v']))
  const session = await h2Connect(t, origin, certificate.cert)
  await assert.rejects(h2Request(session, '/echo/x', tooMany), /NGHTTP2_ENHANCE_YOUR_CALM/)
  assert.equal(upstream.received.length, 0)
})
