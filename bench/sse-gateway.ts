/**
 * The gateway of the SSE benchmark (bench/sse.ts) in its own process, so its CPU time and memory can
 * be read from /proc: `node bench/sse-gateway.ts < spec.json` builds the gateway on `db` with the
 * chat module as its one module, creates `users` users with a session each through the gateway's
 * store, writes them to `usersFile` as JSON `[{crmId, token}]`, listens on an ephemeral loopback port
 * and prints one JSON line (SseGatewayReady). SIGUSR2 starts the V8 CPU profiler and the next
 * SIGUSR2 writes the profile to `profile` (what `--cpu-prof` records, but only the window under load);
 * SIGHUP collects garbage (with --expose-gc) and writes the memory use to `memoryFile`; SIGTERM closes the gateway.
 */
import { writeFileSync } from 'node:fs'
import { text } from 'node:stream/consumers'
import { buildBenchGateway, listenOnLoopback } from './bench-gateway.ts'
import { profileOnSignal, stopWithParent, writeFileAtomically } from './child-process.ts'

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
}

export interface SseGatewayReady {
  port: number
  cookieName: string
}

const CREATE_CONCURRENCY = 16

async function main() {
  const spec = JSON.parse(await text(process.stdin)) as SseGatewaySpec
  const { app, config } = await buildBenchGateway({
    GatewayDB: spec.db,
    ServiceSecret: spec.serviceSecret,
    Modules: { chat: spec.chat },
    Events: spec.events,
  })
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
