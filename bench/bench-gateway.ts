/**
 * The gateway as the benchmarks' server processes start it (bench/proxy-gateway.ts,
 * bench/sse-gateway.ts, bench/upload-servers.ts): silent logs and rate limiters that stay on, so
 * their cost is measured, with limits no benchmark run reaches.
 */
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { buildGateway } from '../packages/gateway/src/app.ts'
import { loadGatewayConfig } from '../packages/gateway/src/config.ts'
import { childrenOf } from './proxy-processes.ts'

const NO_LIMIT = 1_000_000_000_000
const LIMITS = {
  Connection: { Requests: NO_LIMIT },
  Session: { Requests: NO_LIMIT },
  ApiKey: { Requests: NO_LIMIT },
  Bandwidth: { Bytes: NO_LIMIT },
}
const WORKERS_START_MS = 120_000

type BenchGateway = Awaited<ReturnType<typeof buildGateway>>

/** Builds a gateway from `settings` (config-file shape) on top of the benchmarks' defaults. */
export async function buildBenchGateway(settings: Record<string, unknown>) {
  const config = loadGatewayConfig(
    {
      LogLevel: 'silent',
      RateLimits: LIMITS,
      ...settings,
    },
    {},
  )
  const app = await buildGateway(config, { logger: false })
  return { app, config }
}

/** A new user named `name` with a session (as signed in from `userAgent`); returns the session token. */
export async function benchSessionToken(app: BenchGateway, name: string, userAgent: string): Promise<string> {
  const user = await app.store.users.create({ name })
  const { token } = await app.store.sessions.create({ crmId: user.crm_id, method: 'bench', ip: '127.0.0.1', userAgent })
  return token
}

/** Listens on an ephemeral loopback port and returns it. */
export async function listenOnLoopback(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('no port')
  return address.port
}

export interface GatewayWorkers {
  port: number
  /** The primary's pid; its workers are its children. */
  pid: number
  stop(): Promise<void>
}

/**
 * Starts the gateway as `npm start` does (packages/gateway/src/main.ts with `Workers` = `workers`,
 * a primary and its workers on one port) from `settings` (config-file shape, written to
 * `configFile`) on `port`, with the benchmarks' silent logs and unreachable limits, and resolves
 * once it answers and every worker is up.
 */
export async function startGatewayWorkers(
  settings: Record<string, unknown>,
  { workers, port, configFile }: { workers: number; port: number; configFile: string },
): Promise<GatewayWorkers> {
  const gateway = { LogLevel: 'silent', RateLimits: LIMITS, Stun: { Enabled: false }, ...settings }
  writeFileSync(
    configFile,
    JSON.stringify({ gateway: { ...gateway, Host: '127.0.0.1', Port: port, Workers: workers } }),
  )
  const main = new URL('../packages/gateway/src/main.ts', import.meta.url).pathname
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, ATRIUM_CONFIG: configFile },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString('utf8')).slice(-4000)
  })
  const stop = async () => {
    if (child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  const deadline = Date.now() + WORKERS_START_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited: ${errors}`)
    const up = await fetch(`http://127.0.0.1:${port}/auth/v1/health`).then(
      (answer) => answer.ok,
      () => false,
    )
    if (up && childrenOf(child.pid!).length >= workers) return { port, pid: child.pid!, stop }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`the gateway did not start: ${errors}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}
