import { ApiError, EventBatchSchema, parseSubject, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import type { EventFeed, Subjects } from './event-feed.ts'

export interface EventsPluginOptions {
  events: EventFeed
  defaultLimit: number
  maxLimit: number
  maxWaitMs: number
}

// Long-polls re-read at least this often, so writes committed by other instances are seen too.
const RECHECK_MS = 250

/** Parses `subjects` and the legacy `users` and `apps` aliases; undefined when none is given (every addressee). */
export function parseSubjects(query: { subjects?: string; users?: string; apps?: string }): Subjects | undefined {
  if (query.subjects === undefined && query.users === undefined && query.apps === undefined) return undefined
  const subjects: Subjects = { users: [], apps: [] }
  const items = [
    ...(query.subjects ?? '').split(','),
    ...(query.users ?? '').split(',').map((id) => id && `user:${id.trim()}`),
    ...(query.apps ?? '').split(',').map((id) => id && `app:${id.trim()}`),
  ].filter((item) => item.trim() !== '')
  for (const item of items) {
    const subject = parseSubject(item.trim())
    if (!subject) {
      throw new ApiError('InvalidRequest', `subject ${JSON.stringify(item)} is not user:<id>, app:<id> or code:<id>`)
    }
    if (subject.kind === 'user') subjects.users.push(subject.id)
    else if (subject.kind === 'app') subjects.apps.push(subject.id)
    // code: subjects are chat guests, who have no wallet: they match nothing here.
  }
  return subjects
}

/** GET /private/v1/events: the wallet's EventBatch feed for the gateway's poller (spec: "Module events endpoint"). */
export default async function eventsPlugin(
  app: Service,
  { events, defaultLimit, maxLimit, maxWaitMs }: EventsPluginOptions,
) {
  const schema = {
    querystring: Type.Object(
      {
        since: Type.Integer({ minimum: 0, default: 0, description: 'Cursor: events with TickUpdate above it.' }),
        subjects: Type.Optional(
          Type.String({ maxLength: 65_536, description: 'Comma-separated user:, app:, code: subjects.' }),
        ),
        users: Type.Optional(
          Type.String({ maxLength: 65_536, description: 'Legacy alias: comma-separated user ids.' }),
        ),
        apps: Type.Optional(Type.String({ maxLength: 65_536, description: 'Legacy alias: comma-separated app ids.' })),
        limit: Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit }),
        wait: Type.Integer({
          minimum: 0,
          maximum: maxWaitMs,
          default: 0,
          description: 'Long-poll: ms to wait for an event.',
        }),
      },
      { additionalProperties: false },
    ),
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
