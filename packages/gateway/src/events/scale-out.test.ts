import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import { openNotifyChannel, RouteFlags } from '@atrium/platform'
import { closeAfterTest, createTestDatabaseUrl, json, onlyWithPostgres, until } from '@atrium/platform/testing'
import type { FastifyInstance } from 'fastify'
import { buildChat } from '../../../chat/src/app.ts'
import { loadChatConfig } from '../../../chat/src/config.ts'
import { createChatClient, SERVICE_SECRET } from '../../../chat/test/support.ts'
import { startWallet } from '../../../reference/test/support.ts'
import { FAST_EVENTS, openEvents } from '../../test/events.ts'
import { notificationsClient, startPushService, webPushSettings } from '../../test/push-service.ts'
import { startS3Server } from '../../test/s3-server.ts'
import { checksumOf, createUpload, storageDirectory, testBytes, tusHeaders } from '../../test/uploads.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'
import { parseUsageReport, USAGE_CHANNEL } from '../rate-limit/usage-share.ts'
import { TYPING_WINDOW_MS } from '../signals/signals.plugin.ts'

/*
 * The scale-out of ARCHITECTURE.md "Scale-out" and docs/operations.md on one machine: two gateways
 * on one gateway database (PushSending on the first only), two chat instances on one ChatDB
 * (NodeNumber 1 and 2), each gateway's `Modules.chat` naming its own instance, the wallet, and one
 * S3-compatible store for upload bytes.
 * PostgreSQL only: several instances on one SQLite file are not a supported deployment.
 */

/** Listens to the gateways' usage reports: how much of a scope and key has been reported so far. */
async function listenToUsage(t: TestContext, url: string) {
  const uses = new Map<string, number>()
  const { promise: listening, resolve } = Promise.withResolvers<void>()
  const channel = openNotifyChannel({
    url,
    names: [USAGE_CHANNEL],
    onMessage(_name, payload) {
      const report = parseUsageReport(payload)
      for (const [key, amount] of report?.uses ?? []) {
        const named = `${report!.scope} ${key}`
        uses.set(named, (uses.get(named) ?? 0) + amount)
      }
    },
    onError: (error) => assert.fail(error as Error),
    onListening: resolve,
  })
  t.after(() => channel.close())
  await listening
  return (scope: string, key: string) => uses.get(`${scope} ${key}`) ?? 0
}

/** Starts a server built by `build` on an ephemeral port; `stop` closes it once (also after the test). */
async function startKillable<App extends FastifyInstance>(t: TestContext, build: () => Promise<App>) {
  const app = await build()
  let stopped: Promise<void> | undefined
  const stop = () => (stopped ??= app.close().then(() => undefined))
  closeAfterTest(t, stop)
  await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, stop }
}

async function startScaleOut(t: TestContext) {
  const gatewayDb = await createTestDatabaseUrl(t, 'postgres')
  const chatDb = await createTestDatabaseUrl(t, 'postgres')
  const wallet = await startWallet(t, 'postgres', { ServiceSecret: SERVICE_SECRET })
  const chat = await Promise.all(
    [1, 2].map((node) =>
      startKillable(t, () =>
        buildChat(loadChatConfig({ ChatDB: chatDb, ServiceSecret: SERVICE_SECRET, NodeNumber: node }, {}), {
          logger: { level: 'error' },
        }),
      ),
    ),
  )
  const webPush = webPushSettings()
  const push = await startPushService(t, webPush)
  // Upload bytes in one S3-compatible store; each node stages a chunk on its own disk.
  const s3 = await startS3Server(t)
  const chatClient = createChatClient(chat[0]!.url)
  async function startNode(index: number) {
    const config = loadGatewayConfig(
      {
        GatewayDB: gatewayDb,
        ServiceSecret: SERVICE_SECRET,
        NodeNumber: index + 1,
        PushSending: index === 0,
        // Subscribed users are re-read every second, so a second sending node would push too.
        WebPush: { ...webPush, RefreshSeconds: 1 },
        Modules: { chat: chat[index]!.url, wallet: wallet.base },
        Events: FAST_EVENTS,
        FileStorage: 's3',
        Files: { S3: { ...s3.settings, StagingPath: await storageDirectory(t) } },
      },
      {},
    )
    return { ...(await startKillable(t, () => buildGateway(config))), config }
  }
  const first = await startNode(0)
  // Routes live in the shared database: added once, through the first gateway.
  await first.app.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
  await first.app.store.routes.add({ prefix: '/wallet/', upstream: 'wallet', flags: RouteFlags.RequireSession })

  /**
   * A user with a session in the shared gateway database (valid on every gateway) and a browser
   * subscribed to Web Push; the subscription is made before the second gateway starts, so a
   * dispatcher there would watch the user from its start.
   */
  async function signedIn() {
    const user = await first.app.store.users.create()
    await first.app.syncProfiles()
    const { token, session } = await first.app.store.sessions.create({
      crmId: user.crm_id,
      method: 'email_otp',
      ip: '127.0.0.1',
      userAgent: 'test',
    })
    const cookie = `${first.config.Sessions.CookieName}=${token}`
    /** POSTs to `/msg/v1/<operation>` or `/wallet/v1/<operation>` through the gateway at `base`; the status and envelope. */
    async function post(base: string, path: string, body: object) {
      const response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: response.status, envelope: await json(response) }
    }
    const browser = push.subscribe()
    const subscribed = await notificationsClient(first.url, cookie, session.csrf).subscribe(browser)
    assert.equal(subscribed.status, 200, JSON.stringify(subscribed.body))
    return { crmId: user.crm_id, cookie, headers: { Cookie: cookie, 'X-CSRF-Token': session.csrf }, post, browser }
  }
  const users = [await signedIn(), await signedIn()] as const
  const gateway = [first, await startNode(1)] as const
  return { gateway, chat, chatClient, wallet, push, users }
}

test(
  'two gateways and two chat instances on one PostgreSQL: live chat across them, resume on the other gateway, no message lost when a chat instance stops, one node pushes',
  onlyWithPostgres(),
  async (t) => {
    const { gateway, chat, chatClient, wallet, push, users } = await startScaleOut(t)
    const [one, two] = gateway
    // Alice uses gateway 1, Bob gateway 2.
    const [alice, bob] = users
    const aliceStream = openEvents(t, one.url, alice.cookie)
    const bobStream = openEvents(t, two.url, bob.cookie)
    await Promise.all([aliceStream.opened(), bobStream.opened()])

    // Live chat across gateways and chat instances: Alice writes through gateway 1 (chat instance 1),
    // Bob through gateway 2 (chat instance 2); each sees the other's message on their own stream.
    const created = await alice.post(one.url, '/msg/v1/create_chat', { type: 1, peer: String(bob.crmId) })
    assert.equal(created.status, 200, JSON.stringify(created.envelope))
    const chatId: string = created.envelope.result.chat.id
    const send = (who: typeof alice, base: string, content: string) =>
      who.post(base, '/msg/v1/send_message', { chat_id: chatId, content })
    assert.equal((await send(alice, one.url, 'Hello from gateway 1')).status, 200)
    await bobStream.until(() => bobStream.contents().includes('Hello from gateway 1'), 'Alice’s message at Bob')
    assert.equal((await send(bob, two.url, 'Hello from gateway 2')).status, 200)
    await aliceStream.until(() => aliceStream.contents().includes('Hello from gateway 2'), 'Bob’s message at Alice')

    // Presence crosses gateways (a PostgreSQL LISTEN/NOTIFY channel): Bob's only stream is on
    // gateway 2, and gateway 1 tells Alice he is online.
    const bobOnline = async (base: string) => {
      const answer = await fetch(`${base}/auth/v1/presence?chat_id=${chatId}`, { headers: { cookie: alice.cookie } })
      const members: { member: string; online: boolean }[] = (await json(answer)).result.members
      return members.find((member) => member.member === String(bob.crmId))?.online
    }
    await until(async () => (await bobOnline(one.url)) === true, 'Bob online at gateway 1')

    // Typing crosses gateways too (a PostgreSQL LISTEN/NOTIFY channel): Alice types twice through
    // gateway 1, and Bob's streams on gateway 2 and on gateway 1 get each frame once; Alice's none.
    const typingAt = (stream: ReturnType<typeof openEvents>) => {
      const frames: unknown[] = []
      stream.source.addEventListener('typing', (message) => frames.push(JSON.parse(message.data)))
      return frames
    }
    const bobOnOne = openEvents(t, one.url, bob.cookie)
    await bobOnOne.opened()
    const [atTwo, atOne, atAlice] = [typingAt(bobStream), typingAt(bobOnOne), typingAt(aliceStream)]
    for (let index = 0; index < 2; index++) {
      const typed = await alice.post(one.url, '/auth/v1/typing', { chat_id: chatId })
      assert.equal(typed.status, 200, JSON.stringify(typed.envelope))
    }
    await until(() => atTwo.length >= 2 && atOne.length >= 2, 'Alice’s typing at both of Bob’s streams')
    // Something later on both streams before the counts are read again.
    assert.equal((await send(bob, two.url, 'Bob after typing')).status, 200)
    await bobOnOne.until(() => bobOnOne.contents().includes('Bob after typing'), 'Bob’s message on gateway 1')
    await bobStream.until(() => bobStream.contents().includes('Bob after typing'), 'Bob’s message on gateway 2')
    const signal = { chat_id: chatId, user: String(alice.crmId), expires_ms: 6000 }
    assert.deepEqual(atTwo, [signal, signal])
    assert.deepEqual(atOne, [signal, signal])
    assert.deepEqual(atAlice, [])
    bobOnOne.close()

    // The typing limit holds for both gateways together, not per gateway: Bob types twice through
    // gateway 2; once its report is out (seen here on the same channel), gateway 1 admits his third
    // signal and refuses a fourth, where on its own count it would admit two more. All four fall in
    // one clock-aligned window.
    const bobKey = `${bob.crmId}:${chatId}`
    const reported = await listenToUsage(t, one.config.GatewayDB)
    await until(() => Date.now() % TYPING_WINDOW_MS < TYPING_WINDOW_MS / 3, 'a typing window with 4 s left', 7000)
    const bobTypes = (base: string) => bob.post(base, '/auth/v1/typing', { chat_id: chatId })
    for (let index = 0; index < 2; index++) assert.equal((await bobTypes(two.url)).status, 200)
    await until(() => reported('typing', bobKey) >= 2, 'gateway 2’s report of Bob’s typing')
    assert.equal((await bobTypes(one.url)).status, 200)
    const fourth = await bobTypes(one.url)
    assert.equal(fourth.status, 429, JSON.stringify(fourth.envelope))
    assert.equal(fourth.envelope.error.code, 1011)

    // The wallet's events reach Bob's stream through his gateway too.
    await wallet.deposit(alice.crmId, 'USD', 10)
    const paid = await alice.post(one.url, '/wallet/v1/send', { to: String(bob.crmId), currency: 'USD', amount: 3 })
    assert.equal(paid.status, 200, JSON.stringify(paid.envelope))
    await bobStream.until(
      () =>
        bobStream.events.some(
          (event) => event.type === 'TxInWallet' && event.data.id === paid.envelope.result.transaction.id,
        ),
      'the transfer at Bob',
    )

    // Chat instance 2 stops (a graceful stop: requests in flight finish) while Alice sends through gateway 1 (instance 1) and Bob through
    // gateway 2 (instance 2). With one module address per gateway, a send either succeeds (stored
    // once, evented once) or is refused with 502/503 and not stored; Bob then retries a refused
    // send through gateway 1.
    const outcomes: Array<{ content: string; status: number }> = []
    const series = async (who: typeof alice, base: string, label: string) => {
      for (let index = 0; index < 12; index++) {
        const content = `${label} ${index}`
        outcomes.push({ content, status: (await send(who, base, content)).status })
      }
    }
    const sending = Promise.all([series(alice, one.url, 'Alice via 1'), series(bob, two.url, 'Bob via 2')])
    await until(() => outcomes.length >= 6, 'some sends before the instance stops')
    await chat[1]!.stop()
    await sending
    // A load balancer takes gateway 2 out: it is not ready while its chat instance is gone.
    const ready = await fetch(`${two.url}/auth/v1/ready`)
    assert.equal(ready.status, 503)
    assert.equal((await json(ready)).error.details.checks.chat, 'down')
    assert.equal((await fetch(`${one.url}/auth/v1/ready`)).status, 200)
    const refused = outcomes.filter((outcome) => outcome.status !== 200)
    for (const outcome of refused)
      assert.ok([502, 503].includes(outcome.status), `${outcome.content} answered ${outcome.status}`)
    assert.ok(
      refused.every((outcome) => outcome.content.startsWith('Bob via 2')),
      'gateway 1’s instance stayed up',
    )
    assert.ok(refused.length > 0, 'sends through gateway 2 fail once its instance is gone')
    for (const outcome of refused) {
      const retried = await send(bob, one.url, `${outcome.content} retried`)
      assert.equal(retried.status, 200)
      outcomes.push({ content: `${outcome.content} retried`, status: 200 })
    }

    // Gateway 2 stops; Bob's client moves to gateway 1 and resumes after the largest tick it saw.
    // Alice writes meanwhile.
    await two.stop()
    bobStream.close()
    const since = bobStream.maxTick()
    const seenByBob = new Set(bobStream.contents())
    for (let index = 0; index < 3; index++) {
      const content = `While Bob moves ${index}`
      outcomes.push({ content, status: (await send(alice, one.url, content)).status })
    }
    const stored = (await chatClient.user(alice.crmId).read('get_chat_messages', { chat_id: chatId, limit: 100 }))
      .messages as Array<{ content: string }>
    const delivered = outcomes.filter((outcome) => outcome.status === 200).map((outcome) => outcome.content)
    const all = ['Hello from gateway 1', 'Hello from gateway 2', 'Bob after typing', ...delivered]
    assert.deepEqual(
      stored.map((message) => message.content).sort(),
      [...all].sort(),
      'stored once each, refused never',
    )

    const missed = all.filter((content) => !seenByBob.has(content))
    assert.ok(
      seenByBob.has('Hello from gateway 1') && missed.includes('While Bob moves 0'),
      'Bob saw some, missed some',
    )
    const resumed = openEvents(t, one.url, bob.cookie, { query: `?since=${since}` })
    await resumed.until(() => missed.every((content) => resumed.contents().includes(content)), 'what Bob missed')
    await aliceStream.until(() => all.every((content) => aliceStream.contents().includes(content)), 'all at Alice')
    // A barrier after everything, on the resumed stream: anything duplicated would have arrived before it.
    assert.equal((await send(alice, one.url, 'barrier')).status, 200)
    await resumed.until(() => resumed.contents().includes('barrier'), 'the barrier at Bob')
    assert.deepEqual([...resumed.contents()].sort(), [...missed, 'barrier'].sort(), 'exactly what Bob missed, once')
    await aliceStream.until(() => aliceStream.contents().includes('barrier'), 'the barrier at Alice')
    assert.deepEqual([...aliceStream.contents()].sort(), [...all, 'barrier'].sort(), 'each message once at Alice')

    // Web Push: gateway 1 alone sends, one push per message to its recipient.
    const toBob = [...all, 'barrier'].filter(
      (content) => !content.startsWith('Bob') && content !== 'Hello from gateway 2',
    )
    const toAlice = all.filter((content) => content.startsWith('Bob') || content === 'Hello from gateway 2')
    const bodies = (browser: { endpoint: string }, module: string) =>
      push
        .receivedAt(browser.endpoint)
        .filter(({ message }) => message.module === module)
        .map(({ message }) => message.body as string)
    await until(() => bodies(bob.browser, 'chat').length >= toBob.length, 'the pushes to Bob')
    await until(() => bodies(alice.browser, 'chat').length >= toAlice.length, 'the pushes to Alice')
    // Gateway 2's dispatcher sent nothing: a second push of any message would have come by now,
    // since gateway 1 pushed the barrier, sent after everything else.
    assert.deepEqual([...bodies(bob.browser, 'chat')].sort(), [...toBob].sort(), 'one push per message, to Bob')
    assert.deepEqual([...bodies(alice.browser, 'chat')].sort(), [...toAlice].sort(), 'one push per message, to Alice')
    assert.equal(bodies(bob.browser, 'wallet').length, 1, 'one push of the transfer')
    assert.deepEqual(push.refused, [])
  },
)

test(
  'an upload begun on one gateway is finished on the other and downloads from both',
  onlyWithPostgres(),
  async (t) => {
    const { gateway, users } = await startScaleOut(t)
    const [one, two] = gateway
    const [alice, bob] = users
    const bytes = testBytes(300_000, 5)
    const half = 120_000
    const patch = (url: string, offset: number, chunk: Buffer) =>
      fetch(url, {
        method: 'PATCH',
        headers: {
          ...tusHeaders(bob),
          'Content-Type': 'application/offset+octet-stream',
          'Upload-Offset': String(offset),
          'Upload-Checksum': checksumOf(chunk),
        },
        body: new Uint8Array(chunk),
      })
    // Bob begins on gateway 2 …
    const begun = await createUpload(`${two.url}/auth/v1/uploads`, tusHeaders(bob), bytes.length)
    assert.equal((await patch(begun, 0, bytes.subarray(0, half))).status, 204)
    // … and carries on at gateway 1, which finds the upload where gateway 2 left it.
    const there = begun.replace(two.url, one.url)
    const head = await fetch(there, { method: 'HEAD', headers: tusHeaders(bob) })
    assert.equal(head.headers.get('upload-offset'), String(half))
    const finished = await patch(there, half, bytes.subarray(half))
    assert.equal(finished.status, 204)
    const token = finished.headers.get('x-file-token')
    assert.ok(token, 'the finished upload carries its file token')

    const created = await bob.post(one.url, '/msg/v1/create_chat', { type: 1, peer: String(alice.crmId) })
    assert.equal(created.status, 200, JSON.stringify(created.envelope))
    const sent = await bob.post(two.url, '/msg/v1/send_message', {
      chat_id: created.envelope.result.chat.id,
      content: '',
      file: token,
    })
    assert.equal(sent.status, 200, JSON.stringify(sent.envelope))
    for (const node of [one, two]) {
      const download = await fetch(`${node.url}/auth/v1/file/${sent.envelope.result.file.id}`, {
        headers: { cookie: alice.cookie },
      })
      assert.equal(download.status, 200, node.url)
      assert.deepEqual(Buffer.from(await download.arrayBuffer()), bytes, node.url)
    }
  },
)
