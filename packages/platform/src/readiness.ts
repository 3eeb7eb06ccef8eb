import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { Type } from 'typebox'
import type { Database } from './database/database.ts'
import { ApiError } from './errors.ts'

/** Resolves when a dependency answers; rejects (or outlives the timeout) when it is down. */
export type ReadinessCheck = (signal: AbortSignal) => Promise<unknown>

export interface ReadinessOptions {
  /** Path of the readiness endpoint, e.g. `/private/v1/ready`. */
  path: string
  /** How long each dependency has to answer. */
  timeoutMs: number
  /** The dependencies by the name the answer shows: `database`, a module's name. */
  checks: Record<string, ReadinessCheck>
}

/** The `Readiness` settings every process has. */
export const readinessTimeoutSetting = Type.Integer({
  default: 1000,
  minimum: 50,
  maximum: 30_000,
  description: 'How long each dependency (the database, a required module) has to answer a readiness check, in ms.',
})

/** A readiness check that the database answers `select 1`. */
export function databaseCheck<DB>(database: Database<DB>): ReadinessCheck {
  return () => sql`select 1`.execute(database.db)
}

const DependencyStates = Type.Record(Type.String(), Type.Union([Type.Literal('up'), Type.Literal('down')]))

/**
 * The readiness endpoint (docs/operations.md, "Liveness and readiness"): every dependency is asked
 * at once, each with `timeoutMs`; all up answers 200 with their states, any down answers NotReady
 * (503) naming it, so a load balancer takes this instance out until it is back. Liveness stays
 * the health endpoint, which asks nothing.
 */
export function installReadiness(app: FastifyInstance, { path, timeoutMs, checks }: ReadinessOptions): void {
  app.get(
    path,
    { schema: { response: { 200: Type.Object({ status: Type.Literal('ready'), checks: DependencyStates }) } } },
    async (request) => {
      const names = Object.keys(checks)
      const outcomes = await Promise.allSettled(names.map((name) => withTimeout(checks[name]!, timeoutMs)))
      const states: Record<string, 'up' | 'down'> = {}
      const down: string[] = []
      outcomes.forEach((outcome, index) => {
        const name = names[index]!
        states[name] = outcome.status === 'fulfilled' ? 'up' : 'down'
        if (outcome.status === 'rejected') {
          down.push(name)
          request.log.warn({ dependency: name, err: outcome.reason }, 'readiness: a dependency is down')
        }
      })
      if (down.length > 0) throw new ApiError('NotReady', `not ready: ${down.join(', ')} down`, { checks: states })
      return { status: 'ready' as const, checks: states }
    },
  )
}

function withTimeout(check: ReadinessCheck, timeoutMs: number): Promise<unknown> {
  const signal = AbortSignal.timeout(timeoutMs)
  return Promise.race([
    check(signal),
    new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(new Error(`no answer within ${timeoutMs} ms`)), { once: true })
    }),
  ])
}
