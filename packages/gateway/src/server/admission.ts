import type { FrontReply, FrontRequest, ReplyView } from '@atrium/platform'
import type { FastifyInstance } from 'fastify'
import { ANONYMOUS, type Awaitable, type GatewayRequest } from '../auth/caller.ts'
import type { CsrfRoute } from '../auth/csrf.ts'

/**
 * One of the gateway's request checks (connection limit, authentication, caller limits, stale
 * cookie, CSRF): it refuses by sending an answer, or sets what later steps read (`caller`).
 */
export type RequestCheck = (request: GatewayRequest, reply: ReplyView, route: CsrfRoute) => unknown

/**
 * The gateway's checks, in the order every request meets them (ARCHITECTURE.md, the request
 * path). Each is a Fastify onRequest hook for the gateway's own routes, and `admit` runs the same
 * functions in the same order for a request answered at the front door (the proxy, static files),
 * so both paths refuse, count and authenticate alike.
 */
export function createAdmission(app: FastifyInstance) {
  const checks: RequestCheck[] = []
  app.decorateRequest('caller', null as unknown as typeof ANONYMOUS)

  return {
    /** Adds a check after the ones before it, as an onRequest hook and for the front door. */
    add(check: RequestCheck | undefined): void {
      if (!check) return
      checks.push(check)
      app.addHook('onRequest', async (request, reply) => check(request, reply, request.routeOptions.config ?? {}))
    },

    /**
     * Runs the checks for a front-door request: the request with its caller, or undefined once
     * one refused. Answered at once, without a promise, while every check answers at once (a
     * cached session), so most proxied and static requests take no microtask here.
     */
    admit(request: FrontRequest, reply: FrontReply, route: CsrfRoute): Awaitable<GatewayRequest | undefined> {
      const admitted = Object.assign(request, { caller: ANONYMOUS })
      const run = (from: number): Awaitable<GatewayRequest | undefined> => {
        for (let index = from; index < checks.length; index++) {
          const result = checks[index]!(admitted, reply, route)
          if (result instanceof Promise) return result.then(() => (reply.sent ? undefined : run(index + 1)))
          if (reply.sent) return undefined
        }
        return admitted
      }
      return run(0)
    },
  }
}

export type Admission = ReturnType<typeof createAdmission>

/** Goes on with an admitted request: at once when the checks answered at once, else once they did. */
export function whenAdmitted<T>(
  admitted: Awaitable<GatewayRequest | undefined>,
  next: (request: GatewayRequest) => T,
): Awaitable<T | undefined> {
  if (admitted instanceof Promise) return admitted.then((request) => (request ? next(request) : undefined))
  return admitted ? next(admitted) : undefined
}
