import type { FastifyBaseLogger } from 'fastify'
import { EventsCallError } from './module-events.ts'

/**
 * Logs how a module's events feed fares only when that changes (issue 16, item 4), so a module
 * without an events endpoint (the reference CRM) or one that is down is one warning, not one per
 * poll or subscriber: the first failure of a kind is a warning with its reason and no stack (these
 * are conditions of the deployment, not bugs), repeats are debug, a recovery is info, and a
 * different failure warns again. Only an unexpected error keeps its stack.
 */
export function createModuleCondition(module: string, log: FastifyBaseLogger) {
  let current = ''

  return {
    failed(error: unknown): void {
      const kind = error instanceof EventsCallError ? error.failure : 'unexpected'
      const reason = error instanceof Error ? error.message : String(error)
      if (kind === current) {
        log.debug({ module, reason }, 'events: the module still fails')
        return
      }
      current = kind
      if (kind === 'missing') log.warn({ module }, 'events: the module has no events endpoint; asking again later')
      else if (kind === 'unexpected')
        log.warn({ module, err: error }, 'events: the module failed; retrying with back-off')
      else log.warn({ module, reason }, 'events: the module failed; retrying with back-off')
    },

    answered(): void {
      if (current === '') return
      log.info({ module, after: current }, 'events: the module answers again')
      current = ''
    },
  }
}
