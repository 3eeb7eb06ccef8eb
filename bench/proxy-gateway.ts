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
import { benchSessionToken, buildBenchGateway, listenOnLoopback } from './bench-gateway.ts'
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

async function main() {
  const spec = JSON.parse(await text(process.stdin)) as GatewaySpec
  const { app, config } = await buildBenchGateway({
    GatewayDB: `sqlite:${join(spec.dir, 'gateway.db')}`,
    ServiceSecret: 'proxy-bench-service-secret'.padEnd(40, '-'),
    Static: { Apps: spec.staticApps },
  })
  const token = await benchSessionToken(app, 'Bench User', 'wrk')
  await app.store.routes.add({ prefix: spec.prefix, upstream: spec.upstream, flags: RouteFlags.RequireSession })
  const ready: GatewayReady = {
    port: await listenOnLoopback(app),
    cookieName: config.Sessions.CookieName,
    token,
  }
  profileOnSignal(spec.profile)
  process.stdout.write(`${JSON.stringify(ready)}\n`)
  stopWithParent(() => app.close())
}

await main()
