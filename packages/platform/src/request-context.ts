import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance } from 'fastify'

/**
 * The id of the request being handled, carried through everything the request awaits, so that a
 * call one Atrium process makes to another on a request's behalf sends the same X-Request-Id and
 * both processes log it under one id (issue 22, "the request id carried across every hop").
 */
const requestIds = new AsyncLocalStorage<string>()

/** The id of the request whose work is running now; undefined in background work (pollers, sweeps). */
export function currentRequestId(): string | undefined {
  return requestIds.getStore()
}

/** Makes `currentRequestId()` answer the request's id in its hooks and handler. */
export function installRequestContext(app: FastifyInstance): void {
  // Every later hook and the handler run inside `done`, also after a body read from the stream's
  // events (request-context.test.ts sends one in two packets).
  app.addHook('onRequest', (request, _reply, done) => requestIds.run(request.id, done))
}

/** Runs `work` (a front-door request, service.ts) with `currentRequestId()` answering `id`. */
export function runWithRequestId(id: string, work: () => void): void {
  requestIds.run(id, work)
}
