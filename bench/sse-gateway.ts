/**
 * The gateway of the SSE benchmark (bench/sse.ts) in its own process, so its CPU time and memory can
 * be read from /proc: `node bench/sse-gateway.ts < spec.json` builds the gateway on `db` with the
 * chat module as its one module, creates `users` users with a session each through the gateway's
 * store, writes them to `usersFile` as JSON `[{crmId, token}]`, listens on an ephemeral loopback port
 * and prints one JSON line (SseGatewayReady). SIGUSR2 starts the V8 CPU profiler and the next
 * SIGUSR2 writes the profile to `profile` (what `--cpu-prof` records, but only the window under load);
 * SIGHUP collects garbage (with --expose-gc) and writes the memory use to `memoryFile`; SIGTERM closes the gateway.
 * With `workers` above 1 the gateway is instead started as `npm start` starts it
 * (packages/gateway/src/main.ts with `Workers`, a primary and its workers on one port) once the
 * users exist; this process then only waits for it, and the benchmark reads the whole tree.
 */
import { writeFileSync } from 'node:fs'
import { text } from 'node:stream/consumers'
import { buildBenchGateway, listenOnLoopback, startGatewayWorkers } from './bench-gateway.ts'
import { profileOnSignal, stopWithParent, writeFileAtomically } from './child-process.ts'
import { freePort } from './sse-processes.ts'

export interface SseGatewaySpec {
  /** Database URL of the gateway. */
  db: string
  /** Base URL of the chat module. */
  chat: string
  serviceSecret: string
  users: number
  usersFile: string
  /** Where SIGHUP writes `process.memoryUsage()` after the collection. */
  memoryFile: string
  profile: string
  /** Events.* settings to override (the defaults otherwise). */
  events: Record<string, number>
  /** Gateway processes on the port: 1 serves in this process; more run main.ts with `Workers`. */
  workers: number
  /** Where the config file of the workers' gateway goes. */
  configFile: string
}

export interface SseGatewayReady {
  port: number
  cookieName: string
}

const CREATE_CONCURRENCY = 16
/** Starts main.ts with `Workers` on the prepared database; the gateway stops with this process. */
async function startWorkers(spec: SseGatewaySpec, settings: Record<string, unknown>): Promise<number> {
  const options = { workers: spec.workers, port: await freePort(), configFile: spec.configFile }
  const gateway = await startGatewayWorkers(settings, options)
  stopWithParent(() => gateway.stop())
  return gateway.port
}

async function main() {
  const spec = JSON.parse(await text(process.stdin)) as SseGatewaySpec
  const settings = {
    GatewayDB: spec.db,
    ServiceSecret: spec.serviceSecret,
    Modules: { chat: spec.chat },
    Events: spec.events,
  }
  const { app, config } = await buildBenchGateway(settings)
  const users: { crmId: number; token: string }[] = new Array(spec.users)
  let next = 0
  async function createLoop() {
    while (next < spec.users) {
      const index = next++
      const user = await app.store.users.create({ name: `Subscriber ${index + 1}` })
      const session = { crmId: user.crm_id, method: 'bench', ip: '127.0.0.1', userAgent: 'sse-bench' }
      const { token } = await app.store.sessions.create(session)
      users[index] = { crmId: user.crm_id, token }
    }
  }
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, createLoop))
  writeFileSync(spec.usersFile, JSON.stringify(users))
  if (spec.workers > 1) {
    await app.close()
    const ready: SseGatewayReady = { port: await startWorkers(spec, settings), cookieName: config.Sessions.CookieName }
    process.stdout.write(`${JSON.stringify(ready)}\n`)
    return
  }
  const port = await listenOnLoopback(app)
  profileOnSignal(spec.profile)
  // bench/sse.ts reads the memory after a collection (the process runs with --expose-gc).
  process.on('SIGHUP', () => {
    globalThis.gc?.()
    writeFileAtomically(spec.memoryFile, JSON.stringify(process.memoryUsage()))
  })
  const ready: SseGatewayReady = { port, cookieName: config.Sessions.CookieName }
  process.stdout.write(`${JSON.stringify(ready)}\n`)
  stopWithParent(() => app.close())
}

await main()
