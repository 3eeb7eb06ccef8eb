/**
 * The gateway of the proxy benchmark in its own process, so bench/proxy.ts can pin it, read its CPU
 * time and profile it: `node bench/proxy-gateway.ts < spec.json` builds the gateway on a SQLite file
 * in `dir`, creates a user with a session and a route `/bench/` to the upstream, listens on an
 * ephemeral loopback port and prints one JSON line (GatewayReady). SIGUSR2 starts the V8 CPU
 * profiler and the next SIGUSR2 writes the profile to `profile` (what `--cpu-prof` records, but only
 * the window under load, not the start-up); SIGTERM closes the gateway cleanly. With `workers` above
 * 1 the database is prepared here and the gateway runs as `npm start` runs it, a primary and its
 * workers (bench-gateway.ts); GatewayReady then names their pids, and there is no profile.
 */
import { join } from 'node:path'
import { text } from 'node:stream/consumers'
import { RouteFlags } from '@atrium/platform'
import { benchSessionToken, buildBenchGateway, listenOnLoopback, startGatewayWorkers } from './bench-gateway.ts'
import { profileOnSignal, stopWithParent } from './child-process.ts'
import { freePort } from './proxy-nginx.ts'
import { childrenOf } from './proxy-processes.ts'

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
  /** Gateway processes (`Workers`); 1 runs the gateway in this process. */
  workers?: number
}

export interface GatewayReady {
  port: number
  cookieName: string
  /** The session token of the benchmark's user. */
  token: string
  /** With workers: the primary's and the workers' pids, whose CPU is the gateway's. */
  pids?: number[]
}

async function main() {
  const spec = JSON.parse(await text(process.stdin)) as GatewaySpec
  const settings = {
    GatewayDB: `sqlite:${join(spec.dir, 'gateway.db')}`,
    ServiceSecret: 'proxy-bench-service-secret'.padEnd(40, '-'),
    Static: { Apps: spec.staticApps },
  }
  const { app, config } = await buildBenchGateway(settings)
  const token = await benchSessionToken(app, 'Bench User', 'wrk')
  await app.store.routes.add({ prefix: spec.prefix, upstream: spec.upstream, flags: RouteFlags.RequireSession })
  if ((spec.workers ?? 1) > 1) {
    await app.close()
    const options = { workers: spec.workers!, port: await freePort(), configFile: join(spec.dir, 'atrium.json') }
    const gateway = await startGatewayWorkers(settings, options)
    const ready: GatewayReady = {
      port: gateway.port,
      cookieName: config.Sessions.CookieName,
      token,
      pids: [gateway.pid, ...childrenOf(gateway.pid)],
    }
    process.stdout.write(`${JSON.stringify(ready)}\n`)
    stopWithParent(() => gateway.stop())
    return
  }
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
