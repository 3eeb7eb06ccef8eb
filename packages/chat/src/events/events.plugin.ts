import { ApiError, type EventBatch, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import type { EventFeed, FeedBatch, Subjects } from './event-feed.ts'
import { createWakeThrottle } from './wake-throttle.ts'

export interface EventsPluginOptions {
  events: EventFeed
  defaultLimit: number
  maxLimit: number
  maxWaitMs: number
  /** Commits within this window after a wake of the waiting long-polls are coalesced into one wake at its end. */
  wakeWindowMs: number
}

// Long-polls re-read at least this often, so writes committed by other instances are seen too.
const RECHECK_MS = 250

const SUBJECT = /^(user|app|code):([1-9][0-9]{0,15})$/

/** Parses `subjects` and the legacy `users` and `apps` aliases; undefined when none is given (every addressee). */
export function parseSubjects(query: { subjects?: string; users?: string; apps?: string }): Subjects | undefined {
  if (query.subjects === undefined && query.users === undefined && query.apps === undefined) return undefined
  const subjects: Subjects = { members: [], apps: [] }
  const items = [
    ...(query.subjects ?? '').split(','),
    ...(query.users ?? '').split(',').map((id) => id && `user:${id.trim()}`),
    ...(query.apps ?? '').split(',').map((id) => id && `app:${id.trim()}`),
  ].filter((item) => item.trim() !== '')
  for (const item of items) {
    const match = SUBJECT.exec(item.trim())
    if (!match)
      throw new ApiError('InvalidRequest', `subject ${JSON.stringify(item)} is not user:<id>, app:<id> or code:<id>`)
    const id = Number(match[2])
    if (!Number.isSafeInteger(id)) throw new ApiError('InvalidRequest', `subject ${item} is out of range`)
    if (match[1] === 'app') subjects.apps.push(id)
    else subjects.members.push(id)
  }
  return subjects
}

const EventBatchSchema = Type.Object({
  Events: Type.Array(
    Type.Object({
      CrmId: Type.Integer(),
      AppId: Type.Integer(),
      Timetick: Type.Integer(),
      TickUpdate: Type.Integer(),
      EventType: Type.String(),
      Data: Type.Object({}, { additionalProperties: true }),
    }),
  ),
  LastTick: Type.Integer(),
})

/** GET /private/v1/events: the module's EventBatch feed for the gateway's poller. */
export default async function eventsPlugin(
  app: Service,
  { events, defaultLimit, maxLimit, maxWaitMs, wakeWindowMs }: EventsPluginOptions,
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
  // Issue 5: one wake per window, not one per commit, so long-polls re-read at a bounded rate.
  const throttle = createWakeThrottle(wakeWindowMs)
  const stopListening = events.onSequenced(throttle.notify)
  app.addHook('preClose', async () => {
    stopping.abort()
    stopListening()
    throttle.close()
  })

  app.get('/events', { schema, serializerCompiler: () => sendBuffer }, async (request, reply) => {
    const { since, limit, wait } = request.query
    const subjects = parseSubjects(request.query)
    const deadline = Date.now() + wait
    const closed = new AbortController()
    // The response closes early when the poller goes away; stop waiting then.
    reply.raw.once('close', () => closed.abort())
    const stop = AbortSignal.any([closed.signal, stopping.signal])
    // The wake count is taken before each read: a wake during the read makes the next wait return at once.
    let seen = throttle.wakes
    let batch = await events.list({ since, subjects, limit })
    while (batch.Events.length === 0 && Date.now() < deadline && !stop.aborted) {
      await throttle.wait(seen, Math.min(RECHECK_MS, deadline - Date.now()), stop)
      if (stop.aborted) break
      seen = throttle.wakes
      batch = await events.list({ since: batch.LastTick, subjects, limit })
    }
    // The schema documents the answer; serializeEnvelope writes each item's DataJson as its Data.
    return batch as unknown as EventBatch
  })
}

/**
 * Serialises the enveloped batch to UTF-8 once (a string answer would be encoded twice, for its
 * length and to send it). The items of one event share its Data text and differ only in CrmId and
 * AppId, so the rest of an item is built once per event, not once per item: a channel event can
 * fan out to thousands of items.
 */
export function serializeEnvelope(envelope: unknown): Buffer {
  const { result: batch, id } = envelope as { result: FeedBatch; id: string }
  const tails = new Map<string, string>()
  const items = batch.Events.map((item) => {
    let tail = tails.get(item.DataJson)
    if (tail === undefined) {
      tail = `,"Timetick":${item.Timetick},"TickUpdate":${item.TickUpdate},"EventType":${JSON.stringify(item.EventType)},"Data":${item.DataJson}}`
      tails.set(item.DataJson, tail)
    }
    return `{"CrmId":${item.CrmId},"AppId":${item.AppId}${tail}`
  })
  return Buffer.from(
    `{"result":{"Events":[${items.join(',')}],"LastTick":${batch.LastTick}},"id":${JSON.stringify(id)}}`,
  )
}

// Fastify's types want a string from a serializer; it sends a Buffer as it is, with its length.
const sendBuffer = serializeEnvelope as unknown as (envelope: unknown) => string
