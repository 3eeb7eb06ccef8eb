/**
 * The gateway as the benchmarks' server processes start it (bench/proxy-gateway.ts,
 * bench/sse-gateway.ts, bench/upload-servers.ts): silent logs and rate limiters that stay on, so
 * their cost is measured, with limits no benchmark run reaches.
 */
import type { FastifyInstance } from 'fastify'
import { buildGateway } from '../packages/gateway/src/app.ts'
import { loadGatewayConfig } from '../packages/gateway/src/config.ts'

const NO_LIMIT = 1_000_000_000_000

type BenchGateway = Awaited<ReturnType<typeof buildGateway>>

/** Builds a gateway from `settings` (config-file shape) on top of the benchmarks' defaults. */
export async function buildBenchGateway(settings: Record<string, unknown>) {
  const config = loadGatewayConfig(
    {
      LogLevel: 'silent',
      RateLimits: {
        Connection: { Requests: NO_LIMIT },
        Session: { Requests: NO_LIMIT },
        ApiKey: { Requests: NO_LIMIT },
        Bandwidth: { Bytes: NO_LIMIT },
      },
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
