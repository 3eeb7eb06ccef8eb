import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import { RouteFlags } from '@atrium/platform'
import { closeAfterTest, createTestDatabaseUrl, json, onlyWithPostgres, until } from '@atrium/platform/testing'
import { buildChat } from '../../../chat/src/app.ts'
import { loadChatConfig } from '../../../chat/src/config.ts'
import { createChatClient, SERVICE_SECRET } from '../../../chat/test/support.ts'
import { FAST_EVENTS, openEvents } from '../../test/events.ts'
import { signedInUser } from '../../test/support.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'

/*
 * Chat-instance failover behind one gateway (issue 22, item 4; docs/operations.md): two chat
 * instances on one ChatDB, both in the gateway's `Modules.chat`. One instance goes away during a
 * stream of sends, gracefully or abruptly; the clients send each message with its own
 * Idempotency-Key and send it again, with the same key, when an attempt fails. PostgreSQL only:
 * several instances on one SQLite file are not a supported deployment.
 */

/** A chat instance on an ephemeral port that counts the sends it received. */
async function startChatInstance(t: TestContext, chatDb: string, node: number) {
  const app = await buildChat(loadChatConfig({ ChatDB: chatDb, ServiceSecret: SERVICE_SECRET, NodeNumber: node }, {}), {
    logger: { level: 'error' },
  })
  let sends = 0
  let loseAnswers = 0
  app.addHook('onRequest', async (request) => {
    if (request.url.endsWith('/send_message')) sends++
  })
  // After the handler, so the message is stored; the connection goes before the answer leaves.
  app.addHook('onSend', async (request) => {
    if (loseAnswers > 0 && request.url.endsWith('/send_message')) {
      loseAnswers--
      request.raw.socket.destroy()
    }
  })
  let closed: Promise<void> | undefined
  const close = () => (closed ??= app.close().then(() => undefined))
  closeAfterTest(t, close)
  await app.listen({ host: '127.0.0.1', port: 0 })
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    sends: () => sends,
    /** The answers of the next `count` sends are lost on the way back: stored, but the gateway hears nothing. */
    loseAnswers(count: number) {
      loseAnswers = count
    },
    /** A graceful stop: requests in flight finish, later ones are refused. */
    stop: close,
    /** A crash as the network sees it: the listener goes and every connection is cut, mid-request or not. */
    kill() {
      app.server.close()
      app.server.closeAllConnections()
    },
  }
}

async function startFailover(t: TestContext) {
  const chatDb = await createTestDatabaseUrl(t, 'postgres')
  const instances = [await startChatInstance(t, chatDb, 1), await startChatInstance(t, chatDb, 2)]
  const config = loadGatewayConfig(
    {
      GatewayDB: await createTestDatabaseUrl(t, 'postgres'),
      ServiceSecret: SERVICE_SECRET,
      Modules: { chat: instances.map((instance) => instance.url) },
      Events: FAST_EVENTS,
    },
    {},
  )
  const app = await buildGateway(config)
  closeAfterTest(t, () => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const gateway = {
    app,
    store: app.store,
    config,
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
  }
  await app.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
  const users = [await signedInUser(gateway), await signedInUser(gateway)] as const
  return { gateway, instances, users, chatClient: createChatClient(instances[0]!.url) }
}

type User = Awaited<ReturnType<typeof signedInUser>>

/**
 * Sends each message with its own Idempotency-Key until the gateway answers 200; every failed
 * attempt must be an envelope error of a module that failed or was going away.
 */
function createSender(base: string, chatId: string) {
  const failures: Array<{ content: string; status: number; code: number }> = []
  async function send(who: User, content: string): Promise<string> {
    const key = randomUUID()
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${base}/msg/v1/send_message`, {
        method: 'POST',
        headers: { ...who.headers, 'Idempotency-Key': key },
        body: JSON.stringify({ chat_id: chatId, content }),
      })
      const envelope = await json(response)
      if (response.status === 200) return envelope.result.id
      assert.ok([502, 503, 504].includes(response.status), `${content}: ${response.status} ${JSON.stringify(envelope)}`)
      assert.equal(typeof envelope.error?.code, 'number', 'an envelope error')
      assert.equal(typeof envelope.error?.message, 'string')
      assert.equal(typeof envelope.id, 'string')
      failures.push({ content, status: response.status, code: envelope.error.code })
      assert.ok(attempt < 5, `${content} failed ${attempt} times`)
    }
  }
  return { send, failures }
}

async function sendWhileOneInstanceGoes(t: TestContext, end: 'stop' | 'kill') {
  const { gateway, instances, users, chatClient } = await startFailover(t)
  const [alice, bob] = users
  const streams = [openEvents(t, gateway.url, alice.headers.Cookie), openEvents(t, gateway.url, bob.headers.Cookie)]
  await Promise.all(streams.map((stream) => stream.opened()))
  const created = await fetch(`${gateway.url}/msg/v1/create_chat`, {
    method: 'POST',
    headers: alice.headers,
    body: JSON.stringify({ type: 1, peer: String(bob.crmId) }),
  })
  assert.equal(created.status, 200)
  const chatId: string = (await json(created)).result.chat.id
  const sender = createSender(gateway.url, chatId)

  // Four series of sends at once, two by each user, while instance 2 goes away.
  const sent: string[] = []
  const series = async (who: User, label: string) => {
    for (let index = 0; index < 25; index++) {
      const content = `${label} ${index}`
      await sender.send(who, content)
      sent.push(content)
    }
  }
  const sending = Promise.all([
    series(alice, 'Alice a'),
    series(alice, 'Alice b'),
    series(bob, 'Bob a'),
    series(bob, 'Bob b'),
  ])
  await until(() => sent.length >= 20 && instances[1]!.sends() > 0, 'sends at both instances first')
  const goneAfter = sent.length
  if (end === 'stop') await instances[1]!.stop()
  else instances[1]!.kill()
  await sending
  t.diagnostic(
    `${end}: ${goneAfter} sends before, ${sent.length - goneAfter} after; ${sender.failures.length} failed attempts ` +
      `(${sender.failures.map((failure) => `${failure.status}/${failure.code}`).join(', ') || 'none'}); ` +
      `instance 1 took ${instances[0]!.sends()}, instance 2 ${instances[1]!.sends()}`,
  )
  assert.equal(sent.length, 100)

  // Every message is stored once: a retried send whose first attempt was stored answered that message.
  const stored = (await chatClient.user(alice.crmId).read('get_chat_messages', { chat_id: chatId, limit: 200 }))
    .messages as Array<{ content: string }>
  assert.deepEqual(stored.map((message) => message.content).sort(), [...sent].sort(), 'each message stored once')

  // Each arrives once on both streams: a barrier sent after everything comes after any duplicate.
  await sender.send(alice, 'barrier')
  for (const stream of streams) {
    await stream.until(() => stream.contents().includes('barrier'), 'the barrier')
    assert.deepEqual([...stream.contents()].sort(), [...sent, 'barrier'].sort(), 'each message once on the stream')
  }
  // The gateway keeps serving from the instance that is left.
  const ready = await json(await fetch(`${gateway.url}/auth/v1/ready`))
  assert.equal(ready.result.checks.chat, 'up')
}

test('a chat instance stopped during sends behind one gateway loses no message and no event', onlyWithPostgres(), (t) =>
  sendWhileOneInstanceGoes(t, 'stop'),
)

test(
  'a chat instance whose connections are cut during sends behind one gateway loses no message and no event',
  onlyWithPostgres(),
  (t) => sendWhileOneInstanceGoes(t, 'kill'),
)

test(
  'a send stored by an instance whose answer was lost is not stored again when the client sends it again',
  onlyWithPostgres(),
  async (t) => {
    const { gateway, instances, users, chatClient } = await startFailover(t)
    const [alice, bob] = users
    const stream = openEvents(t, gateway.url, bob.headers.Cookie)
    await stream.opened()
    const created = await fetch(`${gateway.url}/msg/v1/create_chat`, {
      method: 'POST',
      headers: alice.headers,
      body: JSON.stringify({ type: 1, peer: String(bob.crmId) }),
    })
    const chatId: string = (await json(created)).result.chat.id
    const sender = createSender(gateway.url, chatId)
    for (const instance of instances) instance.loseAnswers(1)
    const ids = [await sender.send(alice, 'lost answer 1'), await sender.send(alice, 'lost answer 2')]
    assert.ok(sender.failures.length >= 2, 'the lost answers were BadGateway to the client')
    assert.ok(
      sender.failures.every((failure) => failure.status === 502),
      'a request the module received is not sent again by the gateway',
    )
    const stored = (await chatClient.user(alice.crmId).read('get_chat_messages', { chat_id: chatId }))
      .messages as Array<{ id: string; content: string }>
    assert.deepEqual(
      stored.map((message) => [message.id, message.content]).sort(),
      [
        [ids[0], 'lost answer 1'],
        [ids[1], 'lost answer 2'],
      ].sort(),
      'stored once each, and the retry answered the stored message',
    )
    await sender.send(alice, 'barrier')
    await stream.until(() => stream.contents().includes('barrier'), 'the barrier')
    assert.deepEqual(stream.contents(), ['lost answer 1', 'lost answer 2', 'barrier'], 'one event each')
  },
)
