import { type EventBatch, EventBatchSchema, eventsQuerySchema, querySubjects, type Service } from '@atrium/platform'
import type { EventFeed, FeedBatch, Subjects } from './event-feed.ts'
import { createWakeRouter } from './wake-router.ts'
import { createWakeThrottle } from './wake-throttle.ts'

export interface EventsPluginOptions {
  events: EventFeed
  defaultLimit: number
  maxLimit: number
  maxWaitMs: number
  /** Commits within this window after a check of the new events are coalesced into one check at its end. */
  wakeWindowMs: number
  /** The guests among these ids whose invite still stands: the guest of a revoked invite reads nothing. */
  activeGuests: (guestIds: number[]) => Promise<number[]>
}

// New events are checked at least this often while long-polls wait, so writes committed by other instances are seen too.
const RECHECK_MS = 250

/** A query's subjects: `user:` and `app:` as the feed reads them, and the guest ids of `code:` apart. */
export interface QuerySubjects extends Subjects {
  /** `code:<guest id>`: members of their chats too, but only while their invite stands. */
  guests: number[]
}

/** The query's subjects; undefined when none is given (every addressee). */
export function parseSubjects(query: { subjects?: string; users?: string; apps?: string }): QuerySubjects | undefined {
  const parsed = querySubjects(query)
  if (!parsed) return undefined
  const subjects: QuerySubjects = { members: [], apps: [], guests: [] }
  for (const { kind, id } of parsed)
    (kind === 'app' ? subjects.apps : kind === 'code' ? subjects.guests : subjects.members).push(id)
  return subjects
}

/** GET /private/v1/events: the module's EventBatch feed for the gateway's poller. */
export default async function eventsPlugin(
  app: Service,
  { events, defaultLimit, maxLimit, maxWaitMs, wakeWindowMs, activeGuests }: EventsPluginOptions,
) {
  const schema = {
    querystring: eventsQuerySchema({ defaultLimit, maxLimit, maxWaitMs }),
    response: { 200: EventBatchSchema },
  }

  // A stopping service answers its waiting long-polls at once, before its database closes.
  const stopping = new AbortController()
  // Issue 5: a commit wakes only the long-polls its events concern, and is checked at most once per window.
  const router = createWakeRouter(events.touched, RECHECK_MS)
  const throttle = createWakeThrottle(wakeWindowMs, router.check)
  const stopListening = events.onSequenced(throttle.notify)
  app.addHook('preClose', async () => {
    stopping.abort()
    stopListening()
    throttle.close()
    router.close()
  })

  /**
   * The subjects the feed reads for: a guest counts as a member of their chats while their invite
   * stands. Asked again before every read, so a guest stops receiving events from the moment their
   * invite is revoked, also in a long-poll that began before (issue 22).
   */
  async function readable(subjects: QuerySubjects | undefined): Promise<Subjects | undefined> {
    if (!subjects || subjects.guests.length === 0) return subjects
    const guests = await activeGuests(subjects.guests)
    return { members: [...subjects.members, ...guests], apps: subjects.apps }
  }

  app.get('/events', { schema, serializerCompiler: () => sendBuffer }, async (request, reply) => {
    const { since, limit, wait } = request.query
    const subjects = parseSubjects(request.query)
    const wakeFor = subjects && { members: [...subjects.members, ...subjects.guests], apps: subjects.apps }
    const deadline = Date.now() + wait
    const closed = new AbortController()
    // The response closes early when the poller goes away; stop waiting then.
    reply.raw.once('close', () => closed.abort())
    const stop = AbortSignal.any([closed.signal, stopping.signal])
    // Joined before the first read, and the wake count taken before each: a wake during a read makes the next wait return at once.
    const waiter = router.join(wakeFor)
    try {
      let seen = waiter.wakes
      let batch = await events.list({ since, subjects: await readable(subjects), limit })
      while (batch.Events.length === 0 && Date.now() < deadline && !stop.aborted) {
        await waiter.wait(seen, deadline - Date.now(), stop)
        if (stop.aborted) break
        seen = waiter.wakes
        batch = await events.list({ since: batch.LastTick, subjects: await readable(subjects), limit })
      }
      // The schema documents the answer; serializeEnvelope writes each item's DataJson as its Data.
      return batch as unknown as EventBatch
    } finally {
      waiter.leave()
    }
  })
}

/**
 * Serialises the enveloped batch straight to UTF-8 bytes. The items of one event share its Data
 * text and differ only in CrmId and AppId, so the rest of an item is encoded once per event and
 * copied into each of its items: a channel event can fan out to thousands of items, and building
 * the answer as one string to encode afterwards cost several times more (issue 3, docs/benchmarks.md).
 */
export function serializeEnvelope(envelope: unknown): Buffer {
  const { result: batch, id } = envelope as { result: FeedBatch; id: string }
  const head = Buffer.from('{"result":{"Events":[')
  const end = Buffer.from(`],"LastTick":${batch.LastTick}},"id":${JSON.stringify(id)}}`)
  const tails = new Map<string, Buffer>()
  // A subscriber's ids recur across the batch's events: the feed's items are a member's (AppId 0) or an app's (CrmId 0).
  const heads = new Map<number, Buffer>()
  // The same for the items of members who muted the chat (beyond the spec: `Muted`).
  const mutedHeads = new Map<number, Buffer>()
  const parts: Buffer[] = []
  let length = head.length + end.length + Math.max(0, batch.Events.length - 1)
  for (const item of batch.Events) {
    let rest = tails.get(item.DataJson)
    if (rest === undefined) {
      rest = Buffer.from(
        `,"Timetick":${item.Timetick},"TickUpdate":${item.TickUpdate},"EventType":${JSON.stringify(item.EventType)},"Data":${item.DataJson}}`,
      )
      tails.set(item.DataJson, rest)
    }
    const key = item.AppId === 0 ? item.CrmId : item.CrmId === 0 ? -item.AppId : undefined
    const known = item.Muted ? mutedHeads : heads
    let ids = key === undefined ? undefined : known.get(key)
    if (ids === undefined) {
      ids = Buffer.from(`{"CrmId":${item.CrmId},"AppId":${item.AppId}${item.Muted ? ',"Muted":true' : ''}`)
      if (key !== undefined) known.set(key, ids)
    }
    parts.push(ids, rest)
    length += ids.length + rest.length
  }
  const out = Buffer.allocUnsafe(length)
  out.set(head, 0)
  let offset = head.length
  for (let i = 0; i < parts.length; i++) {
    // Each item is its ids and its event's part; a comma goes between items.
    if (i > 0 && i % 2 === 0) out[offset++] = 0x2c
    const part = parts[i]!
    out.set(part, offset)
    offset += part.length
  }
  out.set(end, offset)
  return out
}

// Fastify's types want a string from a serializer; it sends a Buffer as it is, with its length.
const sendBuffer = serializeEnvelope as unknown as (envelope: unknown) => string
