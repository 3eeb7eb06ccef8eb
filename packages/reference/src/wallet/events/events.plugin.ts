import { EventBatchSchema, eventsQuerySchema, querySubjects, type Service } from '@atrium/platform'
import type { EventFeed, Subjects } from './event-feed.ts'

export interface EventsPluginOptions {
  events: EventFeed
  defaultLimit: number
  maxLimit: number
  maxWaitMs: number
}

// Long-polls re-read at least this often, so writes committed by other instances are seen too.
const RECHECK_MS = 250

/** The query's subjects for the feed; undefined when none is given (every addressee). Guests (`code:`) have no wallet. */
export function parseSubjects(query: { subjects?: string; users?: string; apps?: string }): Subjects | undefined {
  const parsed = querySubjects(query)
  if (!parsed) return undefined
  const subjects: Subjects = { users: [], apps: [] }
  for (const { kind, id } of parsed) {
    if (kind === 'user') subjects.users.push(id)
    else if (kind === 'app') subjects.apps.push(id)
  }
  return subjects
}

/** GET /private/v1/events: the wallet's EventBatch feed for the gateway's poller (spec: "Module events endpoint"). */
export default async function eventsPlugin(
  app: Service,
  { events, defaultLimit, maxLimit, maxWaitMs }: EventsPluginOptions,
) {
  const schema = {
    querystring: eventsQuerySchema({ defaultLimit, maxLimit, maxWaitMs }),
    response: { 200: EventBatchSchema },
  }

  // A stopping service answers its waiting long-polls at once, before its database closes.
  const stopping = new AbortController()
  app.addHook('preClose', async () => stopping.abort())

  app.get('/events', { schema }, async (request, reply) => {
    const { since, limit, wait } = request.query
    const subjects = parseSubjects(request.query)
    const deadline = Date.now() + wait
    const closed = new AbortController()
    // The response closes early when the poller goes away; stop waiting then.
    reply.raw.once('close', () => closed.abort())
    const stop = AbortSignal.any([closed.signal, stopping.signal])
    let batch = await events.list({ since, subjects, limit })
    while (batch.Events.length === 0 && Date.now() < deadline && !stop.aborted) {
      await events.waitForCommit(Math.min(RECHECK_MS, deadline - Date.now()), stop)
      if (stop.aborted) break
      batch = await events.list({ since: batch.LastTick, subjects, limit })
    }
    return batch
  })
}
