import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { createTestDatabaseUrl, forEachDialect, until } from '@atrium/platform/testing'
import { type Answer, nodeDirectory, SECRET, send } from '../../test/workers.ts'
import { loadGatewayConfig } from '../config.ts'
import { openGatewayStore } from '../store.ts'

const REQUESTS = 5
const BYTES = 20_000
/** A long window, entered early (below), so that no window ends during the test. */
const WINDOW_SECONDS = 3600
const UPSTREAM_BODY = 'x'.repeat(6_000)

/** An upstream that answers every request with UPSTREAM_BODY. */
async function startUpstream(t: TestContext): Promise<string> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' })
    response.end(UPSTREAM_BODY)
  })
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Asserts a RateLimited envelope for `scope`, with Retry-After matching its details. */
function assertRefused(answer: Answer, scope: string) {
  assert.equal(answer.status, 429, answer.body)
  const { error, id } = JSON.parse(answer.body)
  assert.equal(error.code, 1011)
  assert.equal(error.details.scope, scope)
  assert.equal(typeof id, 'string')
  assert.equal(answer.headers['retry-after'], String(error.details.retryAfterSeconds))
}

/** Sends one request after the other until each worker has refused twice. */
async function sequentially(port: number, path: string, headers: Record<string, string> = {}) {
  const answers: Answer[] = []
  const refusals = (worker: string) =>
    answers.filter((answer) => answer.status === 429 && answer.worker === worker).length
  await until(
    async () => {
      answers.push(await send(port, 'GET', path, headers))
      return refusals('0') >= 2 && refusals('1') >= 2
    },
    `${path} refused twice by each worker`,
    60_000,
  )
  return answers
}

forEachDialect(
  'with two workers the session, API-key and bandwidth limits are exact for the node, sequentially and in parallel',
  async (t, dialect) => {
    const node = await nodeDirectory(t)
    const env = {
      GatewayDB: await createTestDatabaseUrl(t, dialect),
      LocalFileStoragePath: join(node.dir, 'files'),
      LogLevel: 'info',
      RateLimits__Session__Requests: String(REQUESTS),
      RateLimits__Session__WindowSeconds: String(WINDOW_SECONDS),
      RateLimits__ApiKey__Requests: String(REQUESTS),
      RateLimits__ApiKey__WindowSeconds: String(WINDOW_SECONDS),
      RateLimits__Bandwidth__Bytes: String(BYTES),
      RateLimits__Bandwidth__WindowSeconds: String(WINDOW_SECONDS),
    }
    // The test writes its people, sessions, keys and route straight into the gateway's database.
    const config = loadGatewayConfig({}, { ...env, ServiceSecret: SECRET })
    const store = await openGatewayStore(config, { node: 30 })
    t.after(() => store.close())
    const user = await store.users.create({ name: 'Busy' })
    const session = async () =>
      (await store.sessions.create({ crmId: user.crm_id, method: 'test', ip: '127.0.0.1', userAgent: 't' })).token
    const apiKey = async () =>
      (await store.apiKeys.create({ keyType: 'user', crmId: user.crm_id, appId: 0, scopes: [], name: 'k' })).key
    await store.routes.add({ prefix: '/big/', upstream: await startUpstream(t) })
    const [sequentialSession, parallelSession] = [await session(), await session()]
    const [sequentialKey, parallelKey] = [await apiKey(), await apiKey()]

    // Two minutes into a window at least, so the test runs within one.
    const windowMs = WINDOW_SECONDS * 1000
    await until(() => windowMs - (Date.now() % windowMs) > 120_000, 'an early moment in a window', 130_000)
    const port = await node.start(env).port

    await t.test('sequential requests: the limit-th passes and every one after it is refused', async () => {
      for (const [scope, headers] of [
        ['session', { authorization: `Bearer ${sequentialSession}` }],
        ['apiKey', { 'x-api-key': sequentialKey }],
      ] as const) {
        const answers = await sequentially(port, '/auth/v1/session', headers)
        assert.deepEqual(
          answers.map((answer) => answer.status),
          answers.map((_, index) => (index < REQUESTS ? 200 : 429)),
          `${scope}: answered by workers ${answers.map((answer) => answer.worker).join('')}`,
        )
        for (const answer of answers.slice(REQUESTS)) assertRefused(answer, scope)
      }
    })

    await t.test('parallel requests: exactly the limit pass, on both workers together', async () => {
      for (const [scope, headers] of [
        ['session', { authorization: `Bearer ${parallelSession}` }],
        ['apiKey', { 'x-api-key': parallelKey }],
      ] as const) {
        const answers = await Promise.all(
          Array.from({ length: 4 * REQUESTS }, () => send(port, 'GET', '/auth/v1/session', headers)),
        )
        assert.equal(new Set(answers.map((answer) => answer.worker)).size, 2, 'both workers answered')
        assert.equal(answers.filter((answer) => answer.status === 200).length, REQUESTS, scope)
        for (const answer of answers.filter((answer) => answer.status !== 200)) assertRefused(answer, scope)
      }
    })

    await t.test('bandwidth: admitted while the bytes so far are below the limit, whichever worker', async () => {
      const answers = await sequentially(port, '/big/item')
      let total = 0
      for (const [index, answer] of answers.entries()) {
        if (total < BYTES) {
          assert.equal(answer.status, 200, `request ${index + 1} after ${total} bytes, on worker ${answer.worker}`)
          assert.equal(answer.body, UPSTREAM_BODY)
          total += Buffer.byteLength(answer.body)
        } else assertRefused(answer, 'bandwidth')
      }
      assert.ok(total >= BYTES, `${total} bytes admitted`)
    })
  },
)
