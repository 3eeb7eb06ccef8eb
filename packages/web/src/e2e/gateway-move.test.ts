import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { createTestDatabaseUrl, freePort, onlyWithPostgres } from '@atrium/platform/testing'
import { buildChat } from '../../../chat/src/app.ts'
import { loadChatConfig } from '../../../chat/src/config.ts'
import { buildGateway } from '../../../gateway/src/app.ts'
import { loadGatewayConfig } from '../../../gateway/src/config.ts'
import { FAST_EVENTS } from '../../../gateway/test/events.ts'
import { SERVICE_SECRET } from '../../../gateway/test/support.ts'
import { createTestCertificate } from '../../../gateway/test/tls.ts'
import { buildClient } from '../../build-client.ts'
import { openAccount, signOut, virtualAuthenticator, withoutAutofill } from './passkey-steps.ts'
import { openPrivateChat, send, shownMessages } from './steps.ts'
import { launchBrowser, openPage, screenshot, signInByEmail, startSystem } from './system.ts'

/*
 * A deployment of two gateways, p1 and p2 of a test domain, over TLS, sharing one gateway
 * database (PostgreSQL) and one chat module (an instance per gateway on one ChatDB); p3 names a
 * port nothing listens on. Chromium reaches
 * the pN names through its host resolver rules, so the pages have the origins of a real
 * deployment (https://p1.atrium.test). When p1's gateway stops, a page on p1 moves to p2
 * (api/address-move.ts); with Sessions.CookieDomain it is still signed in there. It moves too
 * when p1 only goes silent (a relay in front of it passes nothing and ends nothing): the live
 * stream's heartbeat messages stop, and the client takes the stream for broken.
 * PostgreSQL only: several gateways on one SQLite file are not a supported deployment.
 */

const DOMAIN = 'atrium.test'
const originOf = (name: string) => `https://${name}.${DOMAIN}`

let built: Promise<string> | undefined

/** The client built once for this file with the test domain embedded, as `npm run build -- --domain` does. */
function domainClient(): Promise<string> {
  built ??= mkdtemp(join(tmpdir(), 'atrium-web-e2e-domain-')).then(async (dir) => {
    process.once('exit', () => rm(dir, { recursive: true, force: true }))
    return buildClient(join(dir, 'chat'), DOMAIN)
  })
  return built
}

/**
 * p1 and p2 on one gateway database, with `cookieDomain` as Sessions.CookieDomain, each with its
 * own instance of the chat module (one ChatDB): a module checks the Host the gateway forwards, and
 * a development build takes one more host name besides localhost (PlatformDevHost), so each
 * instance takes its gateway's. p3 names a port nothing listens on.
 */
async function startTwoGateways(t: TestContext, cookieDomain: string, { relayP1 = false } = {}) {
  // Registered before startSystem's after-hooks, so p2 and its chat instance stop before p1's.
  let stopSecond = async () => {}
  t.after(() => stopSecond())
  // With relayP1, Chromium reaches p1 through a relay that can go dark (closed before p1 too).
  const relay = relayP1 ? await startRelay(t) : undefined
  const gatewayDb = await createTestDatabaseUrl(t, 'postgres')
  const { certFile, keyFile } = await createTestCertificate(t)
  const clientDir = await domainClient()
  const node = (name: string, nodeNumber: number) => ({
    GatewayDB: gatewayDb,
    NodeNumber: nodeNumber,
    PublicOrigin: originOf(name),
    PlatformDevHost: `${name}.${DOMAIN}`,
    Tls: { CertFile: certFile, KeyFile: keyFile },
    Static: { Apps: { '/chat/': clientDir } },
    Sessions: { CookieDomain: cookieDomain },
    // Keys bound to the project domain, so one made on p1 signs in on p2 (docs/operations.md).
    WebAuthn: { RpId: DOMAIN },
  })
  const chatNode = (name: string, nodeNumber: number) => ({
    NodeNumber: nodeNumber,
    PlatformDevHost: `${name}.${DOMAIN}`,
  })
  const system = await startSystem(t, 'postgres', node('p1', 1), undefined, chatNode('p1', 1))

  const secondChat = await buildChat(
    loadChatConfig({ ChatDB: system.chat.database, ServiceSecret: SERVICE_SECRET, ...chatNode('p2', 2) }, {}),
    { logger: { level: 'error' } },
  )
  await secondChat.listen({ host: '127.0.0.1', port: 0 })
  const files = await mkdtemp(join(tmpdir(), 'atrium-web-e2e-files-'))
  t.after(() => rm(files, { recursive: true, force: true }))
  const second = await buildGateway(
    loadGatewayConfig(
      {
        ...node('p2', 2),
        ServiceSecret: SERVICE_SECRET,
        PushSending: false,
        Modules: { chat: `http://127.0.0.1:${(secondChat.server.address() as AddressInfo).port}` },
        Proxy: { Routes: [{ Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] }] },
        Events: FAST_EVENTS,
        LocalFileStoragePath: files,
      },
      {},
    ),
  )
  stopSecond = async () => {
    await second.close()
    const closing = secondChat.close()
    secondChat.server.closeAllConnections()
    await closing
  }
  await second.listen({ host: '127.0.0.1', port: 0 })
  relay?.forwardTo(Number(new URL(system.url).port))
  const ports = {
    p1: relay?.port ?? Number(new URL(system.url).port),
    p2: (second.server.address() as AddressInfo).port,
    p3: await freePort(),
  }
  const browser = await launchBrowser(t, [
    `--host-resolver-rules=${Object.entries(ports)
      .map(([name, port]) => `MAP ${name}.${DOMAIN}:443 127.0.0.1:${port}`)
      .join(', ')}`,
    // The test certificate names localhost only; the gateways' names come from the rules above.
    '--ignore-certificate-errors',
  ])
  return { system, browser, relay }
}

/**
 * A TCP relay in front of a port, which can go dark: from then on it passes nothing either way and
 * answers no new connection, yet closes none. That is what a browser sees of a gateway whose host
 * lost power or its network: no error, no end, only silence.
 */
async function startRelay(t: TestContext) {
  let port = 0
  let dark = false
  const pairs = new Set<[Socket, Socket]>()
  const stray = new Set<Socket>()
  const server = createServer((client) => {
    client.on('error', () => {})
    if (dark) return void stray.add(client)
    const upstream = connect(port, '127.0.0.1')
    upstream.on('error', () => {})
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    client.pipe(upstream).pipe(client)
    client.once('close', () => pairs.delete(pair))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const pair of pairs) for (const socket of pair) socket.destroy()
    for (const socket of stray) socket.destroy()
    server.close()
  })
  return {
    port: (server.address() as AddressInfo).port,
    forwardTo(target: number) {
      port = target
    },
    goDark() {
      dark = true
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream)
        upstream.unpipe(client)
        client.pause()
        upstream.pause()
      }
    },
  }
}

/**
 * The messages of the outage: the page's requests to the stopped gateway and to p3 fail, and a
 * request that reaches p1 while it closes is answered 503 (ShuttingDown).
 */
const notOutageNoise = (errors: string[]) =>
  errors.filter(
    (error) =>
      !/ERR_CONNECTION_REFUSED|ERR_CONNECTION_CLOSED|ERR_CONNECTION_RESET/.test(error) &&
      !/status of 503 \(\) \(https:\/\/p1\./.test(error),
  )

test(
  'when its gateway stops, a signed-in page on p1 moves to p2 and stays signed in, missing no message',
  onlyWithPostgres(),
  async (t) => {
    const { system, browser } = await startTwoGateways(t, DOMAIN)
    if (!browser) return
    const alice = await openPage(browser)
    const bob = await openPage(browser)
    await alice.page.goto(`${originOf('p1')}/chat/`)
    const aliceId = await signInByEmail(alice.page, system, 'alice@example.com')
    // Bob signs in on p1 and goes on to p2, signed in there by the same cookie.
    await bob.page.goto(`${originOf('p1')}/chat/`)
    const bobId = await signInByEmail(bob.page, system, 'bob@example.com')
    await bob.page.goto(`${originOf('p2')}/chat/`)
    assert.equal(await bob.page.getByTestId('my-crm-id').textContent(), bobId)

    const chatId = await openPrivateChat(alice.page, bobId)
    await send(alice.page, 'Hello from p1')
    await bob.page.locator(`[data-chat-id="${chatId}"] a`).click()
    await send(bob.page, 'Just before the stop')
    await alice.page.locator('.message:not(.mine)', { hasText: 'Just before the stop' }).waitFor()

    await system.gateway.close()
    await alice.page.getByRole('status').filter({ hasText: 'Offline: reconnecting' }).waitFor()
    await send(bob.page, 'While Alice moves')

    await alice.page.waitForURL(`${originOf('p2')}/chat/c/${chatId}`, { timeout: 20_000 })
    assert.equal(await alice.page.getByTestId('my-crm-id').textContent(), aliceId, 'still signed in as Alice')
    await alice.page.locator('.message', { hasText: 'While Alice moves' }).waitFor()
    await send(bob.page, 'After the move')
    await alice.page.locator('.message:not(.mine)', { hasText: 'After the move' }).waitFor()
    assert.deepEqual(await shownMessages(alice.page), [
      'Hello from p1',
      'Just before the stop',
      'While Alice moves',
      'After the move',
    ])
    await screenshot(alice.page, 'moved-to-p2')
    const [sessionCookie] = (await alice.context.cookies()).filter((cookie) => cookie.name === 'atrium_session')
    assert.equal(sessionCookie?.domain, `.${DOMAIN}`, 'one session cookie, the whole domain’s')
    assert.deepEqual(notOutageNoise(alice.errors), [])
    assert.deepEqual(bob.errors, [])
  },
)

test(
  'without Sessions.CookieDomain the page that moves to p2 lands on its sign-in page',
  onlyWithPostgres(),
  async (t) => {
    const { system, browser } = await startTwoGateways(t, '')
    if (!browser) return
    const alice = await openPage(browser)
    await alice.page.goto(`${originOf('p1')}/chat/`)
    await signInByEmail(alice.page, system, 'alice@example.com')
    const [sessionCookie] = (await alice.context.cookies()).filter((cookie) => cookie.name === 'atrium_session')
    assert.equal(sessionCookie?.domain, `p1.${DOMAIN}`, 'the session cookie is p1’s alone')

    await system.gateway.close()
    await alice.page.waitForURL(`${originOf('p2')}/chat/sign-in`, { timeout: 20_000 })
    await alice.page.getByLabel('Email address').waitFor()
  },
)

test(
  'when p1 goes silent with its connections open, the page on p1 notices and moves to p2',
  onlyWithPostgres(),
  async (t) => {
    const { system, browser, relay } = await startTwoGateways(t, DOMAIN, { relayP1: true })
    if (!browser) return
    const alice = await openPage(browser)
    const bob = await openPage(browser)
    await alice.page.goto(`${originOf('p1')}/chat/`)
    await signInByEmail(alice.page, system, 'alice@example.com')
    // Bob signs in on p1 (whose mail the test reads) and goes on to p2.
    await bob.page.goto(`${originOf('p1')}/chat/`)
    const bobId = await signInByEmail(bob.page, system, 'bob@example.com')
    await bob.page.goto(`${originOf('p2')}/chat/`)
    const chatId = await openPrivateChat(alice.page, bobId)
    await send(alice.page, 'Hello from p1')
    await bob.page.locator(`[data-chat-id="${chatId}"] a`).click()
    await send(bob.page, 'Before the silence')
    await alice.page.locator('.message:not(.mine)', { hasText: 'Before the silence' }).waitFor()

    // p1 keeps running and no connection ends: only its heartbeat messages stop reaching the page.
    relay!.goDark()
    await send(bob.page, 'During the silence')
    await alice.page.getByRole('status').filter({ hasText: 'Offline: reconnecting' }).waitFor({ timeout: 20_000 })
    await alice.page.waitForURL(`${originOf('p2')}/chat/c/${chatId}`, { timeout: 30_000 })
    await alice.page.locator('.message', { hasText: 'During the silence' }).waitFor()
    assert.deepEqual(await shownMessages(alice.page), ['Hello from p1', 'Before the silence', 'During the silence'])
  },
)

test(
  'a passkey made on p1 signs in on p2: with WebAuthn.RpId the keys belong to the project domain',
  onlyWithPostgres(),
  async (t) => {
    const { system, browser } = await startTwoGateways(t, DOMAIN)
    if (!browser) return
    const alice = await openPage(browser)
    await withoutAutofill(alice.context)
    const phone = await virtualAuthenticator(alice.context, alice.page, { transport: 'internal', hasResidentKey: true })
    await alice.page.goto(`${originOf('p1')}/chat/`)
    const aliceId = await signInByEmail(alice.page, system, 'alice@example.com')
    await openAccount(alice.page)
    await alice.page.getByRole('button', { name: 'Add a passkey' }).click()
    await alice.page.getByRole('status').filter({ hasText: 'Passkey 1 added.' }).waitFor()
    assert.deepEqual(
      (await phone.credentials()).map((credential) => credential.rpId),
      [DOMAIN],
      'the key is the domain’s, not p1’s',
    )

    // Signed out (on every pN, by the shared cookie), Alice signs in on p2 with the key made on p1.
    await signOut(alice.page)
    await alice.page.goto(`${originOf('p2')}/chat/sign-in`)
    await alice.page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    await alice.page.getByTestId('my-crm-id').filter({ hasText: aliceId }).waitFor({ state: 'attached' })
    assert.equal(new URL(alice.page.url()).origin, originOf('p2'))
  },
)
