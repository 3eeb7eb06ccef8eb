import assert from 'node:assert/strict'
import { createServer, request as httpRequest } from 'node:http'
import type { TestContext } from 'node:test'
import { type BroadcastEvent, type DatabaseDialect, RouteFlags } from '@atrium/platform'
import { createMigratedTestDatabaseUrl, freePort, json, listenRestartable } from '@atrium/platform/testing'
import { EventSource } from 'eventsource'
import { buildChat } from '../../chat/src/app.ts'
import { loadChatConfig } from '../../chat/src/config.ts'
import { chatMigrations } from '../../chat/src/db/migrations/index.ts'
import { createChatClient, SERVICE_SECRET } from '../../chat/test/support.ts'
import { buildGateway } from '../src/app.ts'
import { loadGatewayConfig } from '../src/config.ts'
import { gatewayMigrations } from '../src/db/migrations/index.ts'

/** Event settings that keep tests fast: short long-polls, quick retries, frequent heartbeats and guest checks. */
export const FAST_EVENTS = {
  PollWaitMs: 1000,
  RetryMinMs: 50,
  RetryMaxMs: 300,
  HeartbeatSeconds: 1,
  GuestCheckSeconds: 1,
}

async function listenOn(app: { listen(options: object): Promise<string> }, port: number) {
  await app.listen({ host: '127.0.0.1', port })
}

/**
 * A chat module on a database that outlives it: `stop` takes it down, `start` brings it back on the
 * same port and database.
 */
export async function startRestartableChat(t: TestContext, dialect: DatabaseDialect) {
  // Added before the database's removal, so the module stops before its database goes.
  t.after(() => stop())
  const url = await createMigratedTestDatabaseUrl(t, dialect, chatMigrations)
  let app: Awaited<ReturnType<typeof buildChat>> | undefined
  // Below the ephemeral range, so no other test's listen(0) takes it while the module is down.
  const port = await freePort()
  async function start() {
    const config = loadChatConfig({ ChatDB: url, ServiceSecret: SERVICE_SECRET }, {})
    app = await buildChat(config, { logger: { level: 'error' } })
    await listenOn(app, port)
  }
  /** Stops the module; `abrupt` cuts open connections (long-polls included) as a crash would. */
  async function stop({ abrupt = false } = {}) {
    const running = app
    app = undefined
    if (abrupt) running?.server.closeAllConnections()
    await running?.close()
  }
  await start()
  const base = `http://127.0.0.1:${port}`
  return { base, client: createChatClient(base), start, stop }
}

/**
 * A gateway on a database that outlives it, so it can be stopped and started again (same port,
 * same sessions); `settings` go on top of the test defaults.
 */
export async function startRestartableGateway(t: TestContext, dialect: DatabaseDialect, settings: object) {
  t.after(() => stop())
  const url = await createMigratedTestDatabaseUrl(t, dialect, gatewayMigrations)
  let app: Awaited<ReturnType<typeof buildGateway>> | undefined
  const port = await freePort()
  const config = loadGatewayConfig({ GatewayDB: url, ServiceSecret: SERVICE_SECRET, ...settings }, {})
  async function start() {
    app = await buildGateway(config)
    await listenOn(app, port)
    return app
  }
  async function stop() {
    const running = app
    app = undefined
    await running?.close()
  }
  const first = await start()
  await first.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
  return {
    url: `http://127.0.0.1:${port}`,
    config,
    start,
    stop,
    get app() {
      assert.ok(app, 'the gateway is running')
      return app
    },
  }
}

export interface WorldOptions {
  /** Gateway settings on top of the test defaults; `Events` on top of FAST_EVENTS. */
  settings?: { Events?: object } & Record<string, unknown>
  /** Delay of each replay page at the recording proxy. */
  replayDelayMs?: number
}

/**
 * A chat module and a gateway polling it through a recording proxy (`proxy.calls` lists every events
 * call the gateway made), sharing the test service secret.
 */
export async function startEventsWorld(t: TestContext, dialect: DatabaseDialect, options: WorldOptions = {}) {
  // After-hooks run in the order they were added: the gateway stops first, so its polls end before the chat does.
  let stopGateway = async () => {}
  t.after(() => stopGateway())
  const chat = await startRestartableChat(t, dialect)
  const proxy = await startRecordingProxy(t, chat.base, { replayDelayMs: options.replayDelayMs })
  const gateway = await startRestartableGateway(t, dialect, {
    ...options.settings,
    Modules: { chat: proxy.url, ...(options.settings?.Modules as object) },
    Events: { ...FAST_EVENTS, ...options.settings?.Events },
  })
  stopGateway = gateway.stop

  /** A user with a session on the gateway: its cookie, and calls to the chat API through the gateway. */
  async function signedIn() {
    const { store } = gateway.app
    const user = await store.users.create()
    // Registered in the chat module before the test names them in a chat (docs/people.md).
    await gateway.app.syncProfiles()
    const { token, session } = await store.sessions.create({
      crmId: user.crm_id,
      method: 'email_otp',
      ip: '127.0.0.1',
      userAgent: 'test',
    })
    const cookie = `${gateway.config.Sessions.CookieName}=${token}`
    async function post(operation: string, body: object) {
      const response = await fetch(`${gateway.url}/msg/v1/${operation}`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      const envelope = await json(response)
      assert.equal(response.status, 200, JSON.stringify(envelope))
      return envelope.result
    }
    return { crmId: user.crm_id, cookie, csrf: session.csrf, post, direct: chat.client.user(user.crm_id) }
  }

  return { chat, proxy, gateway, signedIn }
}

/**
 * Another gateway node on the world's gateway database, reading the chat module directly (unless
 * `settings.Modules` says otherwise) rather than through the world's recording proxy, so
 * `proxy.calls` stay the first node's; `settings` go on top of the test defaults. Its background
 * work (webhooks, Web Push) starts with it; `stop` ends it.
 */
export async function startSecondNode(
  t: TestContext,
  world: Awaited<ReturnType<typeof startEventsWorld>>,
  settings: { Events?: object } & Record<string, unknown> = {},
) {
  const config = loadGatewayConfig(
    {
      GatewayDB: world.gateway.config.GatewayDB,
      ServiceSecret: SERVICE_SECRET,
      Modules: { chat: world.chat.base },
      ...settings,
      Events: { ...FAST_EVENTS, ...settings.Events },
    },
    {},
  )
  const app = await buildGateway(config)
  let stopped: Promise<void> | undefined
  const stop = () => (stopped ??= app.close())
  t.after(stop)
  await app.ready()
  return { app, stop }
}

export interface Resync {
  reason: string
  tick: number
  module?: string
}

/**
 * An `eventsource` client on /auth/v1/subscribe with a session cookie; collects the events and
 * resyncs it receives, with helpers that wait for them.
 */
export function openEvents(
  t: TestContext,
  base: string,
  cookie: string,
  { query = '', headers = {} }: { query?: string; headers?: Record<string, string> } = {},
) {
  const events: BroadcastEvent[] = []
  const ids: string[] = []
  const resyncs: Resync[] = []
  let opened = 0
  const source = new EventSource(`${base}/auth/v1/subscribe${query}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, ...headers, cookie } }),
  })
  source.addEventListener('open', () => {
    opened++
  })
  source.addEventListener('message', (message) => {
    events.push(JSON.parse(message.data) as BroadcastEvent)
    ids.push(message.lastEventId)
  })
  source.addEventListener('resync', (message) => {
    resyncs.push(JSON.parse(message.data) as Resync)
  })
  t.after(() => source.close())

  async function until(condition: () => boolean, what: string, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs
    while (!condition()) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; got ${JSON.stringify(events)}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  return {
    source,
    events,
    ids,
    resyncs,
    /** Resolves once the stream is open (the subjects are polled from then on). */
    opened: () => until(() => opened > 0, 'the stream to open'),
    until,
    /** The largest tick received, as the client keeps it. */
    maxTick: () => Math.max(0, ...events.map((event) => event.tick)),
    /** The messages' contents, in arrival order. */
    contents: () =>
      events.filter((event) => event.type === 'NewChatMessage').map((event) => event.data.content as string),
    close: () => source.close(),
  }
}

/** What a recording proxy saw of one events call. */
export interface EventsCall {
  since: number
  subjects: string[]
  wait: number
  at: number
}

/**
 * A real HTTP proxy in front of a module that records its events calls and can slow down replay
 * pages (`wait=0` calls with subjects), so tests can act while a replay is in progress. `stop`
 * makes the module unreachable (connections refused) while it keeps running; `start` reopens the
 * same port.
 */
export async function startRecordingProxy(t: TestContext, target: string, options: { replayDelayMs?: number } = {}) {
  const calls: EventsCall[] = []
  const server = createServer((request, response) => {
    const url = new URL(request.url!, 'http://proxy')
    let delay = 0
    if (url.pathname === '/private/v1/events') {
      const subjects = (url.searchParams.get('subjects') ?? '').split(',').filter(Boolean)
      const wait = Number(url.searchParams.get('wait') ?? 0)
      calls.push({ since: Number(url.searchParams.get('since')), subjects, wait, at: Date.now() })
      if (wait === 0 && subjects.length > 0) delay = options.replayDelayMs ?? 0
    }
    setTimeout(() => {
      const upstream = httpRequest(
        `${target}${request.url}`,
        { method: request.method, headers: request.headers },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(response)
        },
      )
      upstream.on('error', () => response.destroy())
      response.on('close', () => upstream.destroy())
      request.pipe(upstream)
    }, delay)
  })
  const { port, start, stop } = await listenRestartable(t, server)
  return { url: `http://127.0.0.1:${port}`, calls, start, stop }
}
