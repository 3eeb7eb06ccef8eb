import type { Service } from '@atrium/platform'
import { Type } from 'typebox'
import type { CallerResolver } from '../caller.ts'
import type { Store } from '../store.ts'

/** Longest wait of one call/events request; short enough that a closing module is not held up long. */
export const MAX_WAIT_MS = 10_000
/** Other instances' commits are not announced here: the feed is read again at least this often. */
const RECHECK_MS = 1000
const CALL_EVENTS = new Set(['CallUpdated', 'CallSignal'])

const callEvents = {
  querystring: Type.Object(
    {
      since: Type.Optional(
        Type.String({
          pattern: '^(0|[1-9][0-9]{0,15})$',
          description: 'last_tick of the previous answer; omitted: start now',
        }),
      ),
      wait: Type.Integer({ minimum: 0, maximum: MAX_WAIT_MS, default: 0, description: 'ms to wait for an event' }),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      events: Type.Array(
        Type.Object({
          type: Type.String(),
          tick: Type.String(),
          data: Type.Record(Type.String(), Type.Unknown()),
        }),
      ),
      last_tick: Type.String({ description: 'The since of the next request.' }),
    }),
  },
}

/**
 * GET /call/events: the call events (CallUpdated, CallSignal) addressed to the caller after
 * `since`, waiting up to `wait` ms for one: for clients without an SSE stream. Guests have one
 * (issue 22); the web client's guest page long-polls this only while its stream is down (docs/calls.md).
 */
export function callEventsRoute(
  app: Service,
  { store, resolveCaller }: { store: Store; resolveCaller: CallerResolver },
) {
  const waiting = new Set<() => void>()
  app.addHook('onClose', async () => {
    for (const wake of waiting) wake()
  })

  /** Resolves at the next commit readable here, after `ms`, or when the module closes. */
  function nextCommit(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        off()
        clearTimeout(timer)
        waiting.delete(done)
        resolve()
      }
      const off = store.events.onSequenced(done)
      const timer = setTimeout(done, ms)
      waiting.add(done)
    })
  }

  app.get('/call/events', { schema: callEvents }, async (request) => {
    const caller = await resolveCaller(request)
    const { since, wait } = request.query
    if (since === undefined) {
      // The head, probed without subjects: the first request starts from now.
      const { LastTick } = await store.events.list({ since: 0, subjects: { members: [], apps: [] }, limit: 1 })
      return { events: [], last_tick: String(LastTick) }
    }
    const subjects = { members: [caller.member], apps: [] }
    const deadline = Date.now() + wait
    let cursor = Number(since)
    for (;;) {
      const batch = await store.events.list({ since: cursor, subjects, limit: 100 })
      cursor = batch.LastTick
      const events = batch.Events.filter((event) => CALL_EVENTS.has(event.EventType)).map((event) => ({
        type: event.EventType,
        tick: String(event.TickUpdate),
        data: JSON.parse(event.DataJson) as Record<string, unknown>,
      }))
      const left = deadline - Date.now()
      if (events.length > 0 || left <= 0) return { events, last_tick: String(cursor) }
      await nextCommit(Math.min(RECHECK_MS, left))
      if (app.server.listening === false) return { events: [], last_tick: String(cursor) }
    }
  })
}
