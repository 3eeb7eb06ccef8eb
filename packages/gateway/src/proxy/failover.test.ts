import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import { RouteFlags } from '@atrium/platform'
import { forEachDialect, json, until } from '@atrium/platform/testing'
import { startChat } from '../../../chat/test/support.ts'
import { openEvents } from '../../test/events.ts'
import { capturedLog, SERVICE_SECRET, signedInUser, startGateway } from '../../test/support.ts'
import { downUpstreamUrl, startEchoUpstream } from '../../test/upstream.ts'
import { loadGatewayConfig } from '../config.ts'
import { createModuleInstances } from './module-instances.ts'

/** A module instance that reads each request and then drops the connection without answering. */
async function startDroppingUpstream(t: TestContext) {
  let requests = 0
  const server = createServer((request) => {
    requests++
    request.resume()
    request.on('end', () => request.socket.destroy())
  })
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests
    },
  }
}

forEachDialect(
  'requests are spread over the instances of a module, and one that refuses connections is passed over',
  async (t, dialect) => {
    const [one, two] = [await startEchoUpstream(t), await startEchoUpstream(t)]
    const down = await downUpstreamUrl()
    const gateway = await startGateway(t, dialect, {
      settings: { Modules: { echo: [down, one.url, two.url] }, Proxy: { InstanceBackoffMs: 60_000 } },
    })
    await gateway.store.routes.add({ prefix: '/echo/', upstream: 'echo' })
    const bodies = Array.from({ length: 9 }, (_, index) => `payload ${index} `.repeat(200 * (index + 1)))
    for (const body of bodies) {
      const response = await fetch(`${gateway.url}/echo/v1/send`, { method: 'POST', body })
      assert.equal(response.status, 200)
      assert.equal((await json(response)).body, body, 'the body reached an instance whole')
    }
    const seen = [...one.received, ...two.received].map((received) => received.body)
    assert.deepEqual(seen.sort(), [...bodies].sort(), 'each request reached one instance once')
    assert.ok(one.received.length >= 3 && two.received.length >= 3, 'both instances took requests')
  },
)

forEachDialect(
  'a request an instance received is never sent again: its dropped connection answers BadGateway',
  async (t, dialect) => {
    const dropping = await startDroppingUpstream(t)
    const echo = await startEchoUpstream(t)
    const gateway = await startGateway(t, dialect, { settings: { Modules: { m: [dropping.url, echo.url] } } })
    await gateway.store.routes.add({ prefix: '/m/', upstream: 'm' })
    const statuses: number[] = []
    for (let index = 0; index < 6; index++) {
      const response = await fetch(`${gateway.url}/m/v1/send`, { method: 'POST', body: `request ${index}` })
      const body = await json(response)
      statuses.push(response.status)
      if (response.status === 502) assert.equal(body.error.code, 2000)
    }
    assert.ok(dropping.requests > 0, 'the dropping instance took requests')
    assert.equal(statuses.filter((status) => status === 502).length, dropping.requests, 'each one answered 502')
    assert.equal(statuses.filter((status) => status === 200).length, echo.received.length)
    assert.equal(dropping.requests + echo.received.length, 6, 'no request was sent twice')
  },
)

forEachDialect(
  'an instance that came back is in rotation again after its back-off, and the log says both',
  async (t, dialect) => {
    const echo = await startEchoUpstream(t)
    const down = await downUpstreamUrl()
    const log = capturedLog()
    const gateway = await startGateway(t, dialect, {
      settings: { Modules: { echo: [down, echo.url] }, Proxy: { InstanceBackoffMs: 200 } },
      logger: { level: 'info', stream: log.stream },
    })
    await gateway.store.routes.add({ prefix: '/echo/', upstream: 'echo' })
    for (let index = 0; index < 4; index++) assert.equal((await fetch(`${gateway.url}/echo/v1/x`)).status, 200)
    assert.equal(echo.received.length, 4)

    // The instance starts again on its address.
    const back = createServer((_request, response) => response.end('{"back":true}'))
    t.after(() => new Promise<void>((resolve) => back.close(() => resolve())))
    await new Promise<void>((resolve) => back.listen(Number(new URL(down).port), '127.0.0.1', resolve))
    let answeredByBack = 0
    await until(async () => {
      const response = await fetch(`${gateway.url}/echo/v1/x`)
      if ((await json(response)).back === true) answeredByBack++
      return answeredByBack >= 2
    }, 'requests at the instance that came back')
    const lines = log.lines.map((line) => JSON.parse(line) as { msg: string; module?: string; instance?: string })
    const about = (msg: string) => lines.filter((line) => line.msg === msg && line.instance === new URL(down).origin)
    assert.ok(about('module instance skipped').length >= 1, 'the fall out of rotation is logged')
    assert.equal(about('module instance back in rotation').length, 1, 'and the return, once')
    assert.equal(about('module instance skipped')[0]?.module, 'echo')
  },
)

forEachDialect(
  'the events poller, sends, typing and readiness use the chat instance that is up',
  async (t, dialect) => {
    const chat = await startChat(t, dialect, { ServiceSecret: SERVICE_SECRET })
    const gateway = await startGateway(t, dialect, {
      settings: { Modules: { chat: [await downUpstreamUrl(), chat.base] } },
    })
    await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
    const [alice, bob] = [await signedInUser(gateway), await signedInUser(gateway)]
    await gateway.app.syncProfiles()
    const stream = openEvents(t, gateway.url, bob.headers.Cookie)
    await stream.opened()
    const post = (path: string, body: object) =>
      fetch(`${gateway.url}${path}`, { method: 'POST', headers: alice.headers, body: JSON.stringify(body) })
    const created = await json(await post('/msg/v1/create_chat', { type: 1, peer: String(bob.crmId) }))
    const chatId = created.result.chat.id
    for (let index = 0; index < 4; index++) {
      const sent = await post('/msg/v1/send_message', { chat_id: chatId, content: `message ${index}` })
      assert.equal(sent.status, 200)
    }
    await stream.until(() => stream.contents().length === 4, 'the four messages at Bob')
    assert.deepEqual(stream.contents(), ['message 0', 'message 1', 'message 2', 'message 3'])
    // Typing asks the chat module for the chat's members (signals/chat-audience.ts).
    const typing = await post('/auth/v1/typing', { chat_id: chatId })
    assert.equal(typing.status, 200, JSON.stringify(await typing.clone().json()))
    const ready = await json(await fetch(`${gateway.url}/auth/v1/ready`))
    assert.equal(ready.result.checks.chat, 'up', 'one instance answering is enough')
  },
)

test('instances are tried round robin, one that failed last while it is skipped, and in rotation again after', () => {
  let time = 1_000
  const instances = createModuleInstances('chat', ['http://a:1/chat', 'http://b:1/chat', 'http://c:1/chat'], {
    backoffMs: 100,
    now: () => time,
  })
  assert.deepEqual(instances.order(), ['http://a:1', 'http://b:1', 'http://c:1'])
  assert.deepEqual(instances.order(), ['http://b:1', 'http://c:1', 'http://a:1'])
  instances.failed('http://c:1')
  assert.deepEqual(instances.order(), ['http://a:1', 'http://b:1', 'http://c:1'])
  assert.deepEqual(instances.order(), ['http://a:1', 'http://b:1', 'http://c:1'])
  instances.failed('http://a:1')
  instances.failed('http://a:1')
  // a is skipped for 200 ms now (doubled), c for 100 ms: c's back-off ends first.
  assert.deepEqual(instances.order(), ['http://b:1', 'http://c:1', 'http://a:1'])
  // c is back in rotation; a, still skipped, comes last.
  time += 100
  assert.deepEqual(instances.order(), ['http://c:1', 'http://b:1', 'http://a:1'])
  time += 100
  assert.deepEqual(instances.order(), ['http://a:1', 'http://b:1', 'http://c:1'])
  instances.failed('http://b:1')
  instances.answered('http://b:1')
  assert.equal(instances.states().find((state) => state.origin === 'http://b:1')?.skipUntil, 0)
})

test('the instances of a module must differ in origin only', () => {
  assert.throws(
    () => loadGatewayConfig({ ServiceSecret: SERVICE_SECRET, Modules: { m: ['http://a:1/x', 'http://b:1/y'] } }, {}),
    /Modules\.m: the instances of a module must have the same path/,
  )
  assert.throws(
    () => loadGatewayConfig({ ServiceSecret: SERVICE_SECRET, Modules: { m: ['http://a:1/x', 'http://a:1/x/'] } }, {}),
    /Modules\.m: each instance needs its own origin/,
  )
  const config = loadGatewayConfig(
    { ServiceSecret: SERVICE_SECRET, Modules: { m: ['http://a:1/x', 'http://b:2/x/'] } },
    {},
  )
  assert.deepEqual(config.Modules.m, ['http://a:1/x', 'http://b:2/x/'])
})
