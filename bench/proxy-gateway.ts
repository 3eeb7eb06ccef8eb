/**
 * The gateway of the proxy benchmark in its own process, so bench/proxy.ts can pin it, read its CPU
 * time and profile it: `node bench/proxy-gateway.ts < spec.json` builds the gateway on a SQLite file
 * in `dir`, creates a user with a session and a route `/bench/` to the upstream, listens on an
 * ephemeral loopback port and prints one JSON line (GatewayReady). SIGUSR2 starts the V8 CPU
 * profiler and the next SIGUSR2 writes the profile to `profile` (what `--cpu-prof` records, but only
 * the window under load, not the start-up); SIGTERM closes the gateway cleanly.
 */
import { join } from 'node:path'
import { text } from 'node:stream/consumers'
import { RouteFlags } from '@atrium/platform'
import { buildGateway } from '../packages/gateway/src/app.ts'
import { loadGatewayConfig } from '../packages/gateway/src/config.ts'
import { profileOnSignal, stopWithParent } from './child-process.ts'

export interface GatewaySpec {
  /** Directory for the database. */
  dir: string
  /** Base URL of the trivial upstream. */
  upstream: string
  /** Path prefix the upstream is routed at. */
  prefix: string
  /** Where SIGUSR2 writes the .cpuprofile. */
  profile: string
  /** Static.Apps: mount path -> directory of the static page. */
  staticApps: Record<string, string>
}

export interface GatewayReady {
  port: number
  cookieName: string
  /** The session token of the benchmark's user. */
  token: string
}

const NO_LIMIT = 1_000_000_000_000

async function main() {
  const spec = JSON.parse(await text(process.stdin)) as GatewaySpec
  const config = loadGatewayConfig(
    {
      GatewayDB: `sqlite:${join(spec.dir, 'gateway.db')}`,
      ServiceSecret: 'proxy-bench-service-secret'.padEnd(40, '-'),
      LogLevel: 'silent',
      Static: { Apps: spec.staticApps },
      // The limiters stay on, so their cost is measured, with limits no benchmark run reaches.
      RateLimits: {
        Connection: { Requests: NO_LIMIT },
        Session: { Requests: NO_LIMIT },
        ApiKey: { Requests: NO_LIMIT },
        Bandwidth: { Bytes: NO_LIMIT },
      },
    },
    {},
  )
  const app = await buildGateway(config, { logger: false })
  const user = await app.store.users.create({ name: 'Bench User' })
  const { token } = await app.store.sessions.create({
    crmId: user.crm_id,
    method: 'bench',
    ip: '127.0.0.1',
    userAgent: 'wrk',
  })
  await app.store.routes.add({ prefix: spec.prefix, upstream: spec.upstream, flags: RouteFlags.RequireSession })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('no port')
  const ready: GatewayReady = {
    port: address.port,
    cookieName: config.Sessions.CookieName,
    token,
  }
  profileOnSignal(spec.profile)
  process.stdout.write(`${JSON.stringify(ready)}\n`)
  stopWithParent(() => app.close())
}

await main()
