import { type EventBatch, parseEventBatch, signedHeaders } from '@atrium/platform'
import { getGlobalDispatcher, request } from 'undici'
import type { ModuleInstances } from '../proxy/module-instances.ts'

/** One call of a module's `GET /private/v1/events` (spec: "Module events endpoint"). */
export interface EventsQuery {
  since: number
  /** `user:`, `app:`, `code:` subjects; the call returns only events addressed to one of them. */
  subjects: readonly string[]
  limit: number
  /** Long-poll: ms the module may wait for an event before answering an empty batch. */
  wait: number
}

/** Why an events call failed: `missing` is a module that has no events endpoint (404). */
export type EventsFailure = 'unreachable' | 'timeout' | 'status' | 'invalid' | 'missing'

/** A failed events call; `aborted` calls (the caller gave up) are not failures and rethrow the abort. */
export class EventsCallError extends Error {
  readonly failure: EventsFailure
  constructor(failure: EventsFailure, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'EventsCallError'
    this.failure = failure
  }
}

export interface ModuleEventsOptions {
  /** The module's instances (the Modules setting): each call goes to one that is up. */
  instances: ModuleInstances
  serviceSecret: string
  /** Time a call may take beyond its `wait`. */
  timeoutMs: number
}

/** undici's errors for a module that did not answer (or finish answering) in time. */
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])

/**
 * Returns the function that calls one module's events endpoint as the gateway: signed like every
 * hop (ARCHITECTURE.md step 7) with no user, since the poller acts for every subscriber at once.
 * The call is undici's `request` on its keep-alive pool (through the module's instances), with
 * undici's own timeouts: a long-poll is made for every batch, so it costs no `fetch` objects and
 * no timer signal of its own.
 */
export function createModuleEvents({ instances, serviceSecret, timeoutMs }: ModuleEventsOptions) {
  const base = instances.url.replace(/\/+$/, '')
  const dispatcher = instances.via(getGlobalDispatcher())

  return async function fetchEvents(query: EventsQuery, signal: AbortSignal): Promise<EventBatch> {
    // Subjects are [a-z:0-9] only, so they go unencoded: a chunk of 200 stays well inside URL limits.
    const url =
      `${base}/private/v1/events?since=${query.since}&subjects=${query.subjects.join(',')}` +
      `&limit=${query.limit}&wait=${query.wait}`
    let body: { result?: unknown }
    try {
      const response = await request(url, {
        dispatcher,
        headers: signedHeaders(serviceSecret, 'GET', url),
        signal,
        headersTimeout: query.wait + timeoutMs,
        bodyTimeout: timeoutMs,
      })
      if (response.statusCode === 404) {
        await response.body.dump()
        throw new EventsCallError('missing', 'the module has no events endpoint (404)')
      }
      if (response.statusCode !== 200) {
        const text = await response.body.text()
        throw new EventsCallError('status', `the module answered ${response.statusCode}: ${text.slice(0, 200)}`)
      }
      body = (await response.body.json()) as { result?: unknown }
    } catch (error) {
      throw failed(error, signal)
    }
    try {
      return parseEventBatch(body?.result)
    } catch (error) {
      throw new EventsCallError('invalid', `the module answered an invalid EventBatch: ${(error as Error).message}`)
    }
  }
}

export type FetchEvents = ReturnType<typeof createModuleEvents>

function failed(error: unknown, signal: AbortSignal): unknown {
  if (error instanceof EventsCallError) return error
  if (signal.aborted) return signal.reason
  if (TIMEOUT_CODES.has((error as { code?: string }).code ?? '')) {
    return new EventsCallError('timeout', 'the module did not answer in time', { cause: error })
  }
  if (error instanceof SyntaxError) return new EventsCallError('invalid', 'the module answered invalid JSON')
  return new EventsCallError('unreachable', 'the module could not be reached', { cause: error })
}
