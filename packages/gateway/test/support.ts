import { Writable } from 'node:stream'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { createMigratedTestDatabaseUrl, listen } from '@atrium/platform/testing'
import { buildGateway } from '../src/app.ts'
import { loadGatewayConfig } from '../src/config.ts'
import { gatewayMigrations } from '../src/db/migrations/index.ts'

/** A log stream for a test gateway (`logger: { stream }`) that keeps every line it is given. */
export function capturedLog() {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  return { lines, stream }
}

/** The inter-service secret test gateways and modules share. */
export const SERVICE_SECRET = 'gateway-test-service-secret'.padEnd(40, '-')

/** A clock tests move by hand, starting at a fixed time. */
export function createClock(start = Date.UTC(2026, 10, 22, 12)) {
  let time = start
  return {
    now: () => time,
    advance(ms: number) {
      time += ms
    },
  }
}

export interface StartOptions {
  /** Settings on top of the test defaults, in the config-file shape. */
  settings?: Record<string, unknown>
  /** Clock for sessions and challenges; the real clock when omitted. */
  now?: () => number
  /** The gateway's logger (e.g. `{ stream }` of capturedLog()); none when omitted. */
  logger?: { level?: string; stream: Writable }
}

/** Starts a gateway on a fresh database of the dialect and an ephemeral loopback port. */
export async function startGateway(t: TestContext, dialect: DatabaseDialect, options: StartOptions = {}) {
  const config = loadGatewayConfig(
    {
      GatewayDB: await createMigratedTestDatabaseUrl(t, dialect, gatewayMigrations),
      ServiceSecret: SERVICE_SECRET,
      ...options.settings,
    },
    {},
  )
  const app = await buildGateway(config, { now: options.now, logger: options.logger })
  const url = await listen(t, app)
  return { app, url, store: app.store, config }
}

type StartedGateway = Awaited<ReturnType<typeof startGateway>>

/**
 * A new user with a live session on the gateway: the CRM id and the headers a browser would send
 * for a JSON call with that session (cookie, CSRF token, content type).
 */
export async function signedInUser(
  gateway: Pick<StartedGateway, 'store' | 'config'> & { app?: Pick<StartedGateway['app'], 'syncProfiles'> },
) {
  const user = await gateway.store.users.create()
  // With a chat module, the user is registered there before the test names them (docs/people.md).
  await gateway.app?.syncProfiles()
  const { token, session } = await gateway.store.sessions.create({
    crmId: user.crm_id,
    method: 'email_otp',
    ip: '127.0.0.1',
    userAgent: 'test',
  })
  const headers = {
    Cookie: `${gateway.config.Sessions.CookieName}=${token}`,
    'X-CSRF-Token': session.csrf,
    'Content-Type': 'application/json',
  }
  return { crmId: user.crm_id, headers }
}
