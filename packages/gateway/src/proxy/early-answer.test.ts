import assert from 'node:assert/strict'
import { Agent, request as httpRequest } from 'node:http'
import { type AddressInfo, createServer as createNetServer } from 'node:net'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, errorCodes, RouteFlags } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { startChat } from '../../../chat/test/support.ts'
import { SERVICE_SECRET, signedInUser, startGateway } from '../../test/support.ts'
import { createTestCertificate, h2Connect, h2Request } from '../../test/tls.ts'

const MIB = 1024 * 1024

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  /** Local port of the connection the answer came on, to tell a reused connection from a new one. */
  localPort: number
}

/**
 * Sends a request and resolves with the answer even when the server answers (and closes) before
 * the whole body was sent; `agent` keeps the connection for the next request when the server lets it.
 */
function send(
  url: string,
  agent: Agent,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer },
) {
  return new Promise<Answer>((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, agent })
    request.on('response', (response) => {
      const localPort = response.socket.localPort ?? 0
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        body += chunk
      })
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body, localPort }),
      )
    })
    request.on('error', (error) => (request.writableEnded ? undefined : reject(error)))
    request.end(options.body)
  })
}

async function startChatBehindGateway(t: TestContext, dialect: DatabaseDialect) {
  const chat = await startChat(t, dialect, { ServiceSecret: SERVICE_SECRET })
  const gateway = await startGateway(t, dialect, { settings: { Modules: { chat: chat.base } } })
  await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
  const { headers } = await signedInUser(gateway)
  return { chat, gateway, headers }
}

forEachDialect(
  'an oversized send_message gets the module’s 413 and the connection stays usable',
  async (t, dialect) => {
    const { gateway, headers } = await startChatBehindGateway(t, dialect)
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.after(() => agent.destroy())
    const body = Buffer.from(JSON.stringify({ chat_id: '1', content: 'x'.repeat(2 * MIB) }))
    const ports = new Set<number>()
    for (let round = 0; round < 3; round++) {
      const answer = await send(`${gateway.url}/msg/v1/send_message`, agent, { method: 'POST', headers, body })
      assert.equal(answer.status, 413, answer.body)
      assert.equal(JSON.parse(answer.body).error.code, errorCodes.PayloadTooLarge.code)
      assert.notEqual(answer.headers.connection, 'close')
      const next = await send(`${gateway.url}/msg/v1/get_unread_messages`, agent, { headers })
      assert.equal(next.status, 200, `round ${round}: the next request is answered: ${next.body}`)
      ports.add(answer.localPort).add(next.localPort)
    }
    assert.equal(ports.size, 1, 'every request went over the one kept connection')
    const started = Date.now()
    await gateway.app.close()
    assert.ok(Date.now() - started < 3_000, `the gateway closed in ${Date.now() - started} ms`)
  },
)

/** A module that answers 401 as soon as it has the headers and then resets the connection. */
async function startRudeUpstream(t: TestContext) {
  const server = createNetServer((socket) => {
    socket.once('data', () => {
      const body = JSON.stringify({ error: { code: 1008, message: 'no' }, id: 'x' })
      socket.write(
        `HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
          `Connection: close\r\n\r\n${body}`,
        () => socket.resetAndDestroy(),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

forEachDialect(
  'a module that answers early and resets never leaves the client’s connection hanging',
  async (t, dialect) => {
    const gateway = await startGateway(t, dialect, { settings: { Modules: { rude: await startRudeUpstream(t) } } })
    await gateway.store.routes.add({ prefix: '/rude/', upstream: 'rude' })
    await gateway.store.routes.add({ prefix: '/', upstream: 'rude' })
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.after(() => agent.destroy())
    const body = Buffer.alloc(4 * MIB, 120)
    for (let round = 0; round < 3; round++) {
      const answer = await send(`${gateway.url}/rude/upload`, agent, { method: 'POST', body })
      // The module's 401, or BadGateway when its reset arrived before its answer could be read.
      assert.ok([401, 502].includes(answer.status), `round ${round}: ${answer.status} ${answer.body}`)
      assert.equal(typeof JSON.parse(answer.body).error.code, 'number')
      const health = await send(`${gateway.url}/auth/v1/health`, agent, {})
      assert.equal(health.status, 200, `round ${round}: the connection takes its next request`)
    }
    const started = Date.now()
    await gateway.app.close()
    assert.ok(Date.now() - started < 3_000, `the gateway closed in ${Date.now() - started} ms`)
  },
)

forEachDialect('over HTTP/2 an early answer is passed on and the session keeps serving', async (t, dialect) => {
  const certificate = await createTestCertificate(t)
  const chat = await startChat(t, dialect, { ServiceSecret: SERVICE_SECRET })
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { chat: chat.base }, Tls: { CertFile: certificate.certFile, KeyFile: certificate.keyFile } },
  })
  await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat' })
  const session = await h2Connect(t, gateway.url.replace('http:', 'https:'), certificate.cert)
  const body = JSON.stringify({ chat_id: '1', content: 'x'.repeat(2 * MIB) })
  for (let round = 0; round < 2; round++) {
    const answer = await h2Request(
      session,
      '/msg/v1/send_message',
      { ':method': 'POST', 'content-type': 'application/json' },
      body,
    )
    assert.equal(answer.status, 413, answer.body)
    const health = await h2Request(session, '/auth/v1/health')
    assert.equal(health.status, 200)
  }
})
