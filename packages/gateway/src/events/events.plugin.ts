import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import {
  ApiError,
  compileQueryCheck,
  DEVICE_GUID_PATTERN,
  MAX_TIMETICK,
  parseTimetick,
  type Service,
  timetickTime,
} from '@atrium/platform'
import { type Static, Type } from 'typebox'
import type { Apps } from '../apps/apps.repository.ts'
import type { GatewayRequest } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import type { GuestResolver } from '../guests/guest-resolver.ts'
import type { SentMeter } from '../rate-limit/rate-limits.ts'
import type { Admission } from '../server/admission.ts'
import type { Presence } from '../signals/presence.ts'
import type { EventHub } from './event-hub.ts'
import type { EventMetrics } from './event-metrics.ts'
import { guestCredentialsOf, guestSubjectOf, watchGuest } from './guest-streams.ts'
import { createHeartbeats } from './heartbeats.ts'
import { replay } from './replay.ts'
import { toChunk } from './sse-chunks.ts'
import { subjectsOf } from './subjects.ts'
import { Subscriber } from './subscriber.ts'

export interface EventsPluginOptions {
  hub: EventHub
  apps: Apps
  settings: GatewayConfig['Events']
  /** Counts the stream's bytes against the caller's bandwidth limit: no onSend hook sees them. */
  meterSent: SentMeter
  now: () => number
  /** Told when a person's stream opens and closes, for presence (signals/presence.ts). */
  presence?: Pick<Presence, 'connected' | 'disconnected'>
  /** Counts open streams and the events written to them. */
  metrics?: Pick<EventMetrics, 'streamOpened' | 'streamClosed' | 'delivered'>
  /** Resolves a guest's invite code and device to the guest (the chat module); absent without a chat module. */
  resolveGuest?: GuestResolver
  /** The gateway's request checks, which the front door runs for the streams it opens. */
  admission: Admission
}

/** What opening a stream uses of a reply: Fastify's and the front door's both hand over the raw response. */
interface StreamReply {
  readonly raw: ServerResponse
  hijack(): void
  getHeaders(): Record<string, unknown>
}

const subscribeSchema = {
  summary: 'Stream the caller’s events (Server-Sent Events)',
  description:
    'A `text/event-stream` of BroadcastEvent messages (`id: <tick>`, `data: <JSON>`). Without `since` the ' +
    'stream starts fresh; with `since` (or `Last-Event-ID`) the missed events are replayed first. A guest without a ' +
    'session subscribes with the invite code and device it joined with (`code` and `device_guid`). See docs/events.md.',
  querystring: Type.Object(
    {
      since: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: MAX_TIMETICK,
          description: 'The largest tick the client has seen: events after it are replayed, then live ones follow.',
        }),
      ),
      code: Type.Optional(
        Type.String({
          pattern: '^[A-Za-z0-9]{8,64}$',
          description: 'A guest’s invite code (only without a session; with `device_guid`).',
        }),
      ),
      device_guid: Type.Optional(
        Type.String({
          pattern: DEVICE_GUID_PATTERN,
          description: 'The device GUID the guest joined the invite with (only with `code`).',
        }),
      ),
      heartbeat: Type.Optional(
        Type.Literal('event', {
          description:
            'Heartbeats as `event: heartbeat` messages whose data is the period in seconds, one at once, instead of ' +
            'comments: an EventSource sees them, so a client can tell a stream that went silent (docs/events.md).',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  response: {
    200: {
      description: 'The event stream; it stays open until the client or the gateway closes it.',
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    },
  },
}

type SubscribeQuery = Static<typeof subscribeSchema.querystring>

/** The tick to resume after: the larger of `since` and a well-formed Last-Event-ID. */
function resumeTick(since: number | undefined, lastEventId: string | string[] | undefined): number | undefined {
  const resumed = typeof lastEventId === 'string' ? parseTimetick(lastEventId.trim()) : undefined
  if (since === undefined || resumed === undefined) return since ?? resumed
  return Math.max(since, resumed)
}

/**
 * `GET /auth/v1/subscribe`: the SSE channel of the event hub (spec: "SSE rules"). The caller's
 * subjects join the pollers first; a reconnect then replays from the modules what came after
 * `since` and continues with the live events the replay did not already cover.
 */
export default async function eventsPlugin(
  app: Service,
  { hub, apps, settings, meterSent, now, presence, metrics, resolveGuest, admission }: EventsPluginOptions,
) {
  const heartbeats = createHeartbeats(settings.HeartbeatSeconds * 1000)
  const heartbeatEvent = toChunk(`event: heartbeat\ndata: ${settings.HeartbeatSeconds}\n\n`)

  // Streams open at the front door (docs/architecture.md); Fastify's route serves `inject`.
  const checkQuery = compileQueryCheck(subscribeSchema.querystring)
  app.frontDoor.handle('subscribe', {
    async answer(request, reply, _params, query) {
      const admitted = await admission.admit(request, reply, {})
      if (!admitted) return
      checkQuery(query)
      await subscribe(admitted, query as SubscribeQuery, reply)
    },
  })
  app.get(
    '/subscribe',
    { schema: subscribeSchema, exposeHeadRoute: false, config: { envelope: false, frontDoor: 'subscribe' } },
    async (request, reply) => {
      await subscribe(request, request.query, reply)
      return reply
    },
  )

  async function subscribe(request: GatewayRequest, query: SubscribeQuery, reply: StreamReply): Promise<void> {
    const { caller } = request
    const guestCredentials = guestCredentialsOf(request, query)
    if (caller.keyType === '' && !guestCredentials) {
      throw new ApiError(
        'SessionRequired',
        'Subscribing to events needs a signed-in session, an API key, or a guest’s invite code and device.',
      )
    }
    if (caller.keyType !== '' && (query.code !== undefined || query.device_guid !== undefined)) {
      throw new ApiError(
        'InvalidRequest',
        'a signed-in stream follows its session; code and device_guid are for guests',
      )
    }
    if ((query.code === undefined) !== (query.device_guid === undefined)) {
      throw new ApiError('InvalidRequest', 'a guest subscribes with both code and device_guid')
    }
    // A guest has exactly one subject, `code:<guest id>`, which the chat module derives (issue 22).
    const guest =
      caller.keyType === '' && guestCredentials
        ? { credentials: guestCredentials, ...(await guestSubjectOf(resolveGuest, guestCredentials, request.log)) }
        : undefined
    const requested = resumeTick(query.since, request.headers['last-event-id'])
    const tooOld = requested !== undefined && timetickTime(requested) < now() - settings.ReplayMaxAgeSeconds * 1000
    const since = tooOld ? undefined : requested
    const all = guest ? [guest.subject] : await subjectsOf(caller, apps)
    // One subscriber's subjects share one long-poll, so its events of a module stay in cursor order.
    if (all.length > settings.ChunkSubjects) {
      request.log.warn(
        { subjects: all.length },
        'events: more subjects than Events.ChunkSubjects; the rest are not streamed',
      )
    }
    const subjects = all.slice(0, settings.ChunkSubjects)

    // The frames go straight into the response (issue 5): a stream in between cost a buffer, a
    // pipe and a pass through it for every frame of every subscriber.
    const response = reply.raw
    // Only a replay has work to stop.
    const stopped = since === undefined ? undefined : new AbortController()
    let leave = () => {}
    let unwatch = () => {}
    const subscriber = new Subscriber({
      response,
      subjects,
      frameOf: hub.frameOf,
      maxQueued: settings.MaxQueuedEvents,
      heartbeats,
      heartbeat: query.heartbeat === 'event' ? heartbeatEvent : undefined,
      countSent: meterSent(request),
      onDelivered: metrics?.delivered,
      onClose: () => {
        stopped?.abort()
        unwatch()
        leave()
      },
    })
    // Fastify's own access log line, which a hijacked reply does not get. The listener holds the
    // logger rather than the request and reply, so those can go once the stream is open.
    const { log } = request
    let openedAt = 0
    let gone = false
    response.once('close', () => {
      gone = true
      subscriber.close()
      if (openedAt > 0) metrics?.streamClosed()
      if (openedAt > 0)
        log.info({ res: { statusCode: 200 }, responseTime: performance.now() - openedAt }, 'request completed')
    })
    // Without since, each module's events count from the head it had when the stream opened.
    const joined = await hub.subscribe(subscriber, (_module, membership) => since ?? membership.head)
    leave = joined.leave
    if (subscriber.closed) leave()

    // Hijacked, the reply passes no onSend hook: the headers the onRequest hooks set (X-Request-Id)
    // are taken along here, and the bandwidth hook's counting is done by countSent.
    reply.hijack()
    // The client left while its subjects joined: there is nobody to answer.
    if (gone) return
    openedAt = performance.now()
    metrics?.streamOpened()
    if (presence && caller.crmId !== 0) {
      presence.connected(caller.crmId)
      response.once('close', () => presence.disconnected(caller.crmId))
    }
    response.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    })
    subscriber.open()
    if (guest && resolveGuest && !subscriber.closed) {
      unwatch = watchGuest({
        resolveGuest,
        credentials: guest.credentials,
        guest: guest.guest,
        everyMs: settings.GuestCheckSeconds * 1000,
        close: () => subscriber.close(),
        log,
      })
    }
    if (tooOld) {
      const heads = [...joined.memberships.values()].map((membership) => membership.head)
      subscriber.resync('too-old', Math.max(0, ...heads))
    } else {
      // The first bytes send the headers, so the client knows its subjects are polled from here on.
      subscriber.comment('subscribed')
    }
    // The client learns the period at once, and from then on can tell a silent stream.
    if (query.heartbeat === 'event') subscriber.signal(heartbeatEvent)
    if (since === undefined) subscriber.goLive(new Map())
    else {
      const { signal } = stopped!
      replayMissed(subscriber, since, joined.memberships, signal).catch((error) => {
        if (signal.aborted) return
        log.error({ err: error }, 'events: replay failed')
        subscriber.close()
      })
    }
  }

  async function replayMissed(
    subscriber: Subscriber,
    since: number,
    memberships: Map<string, { cursor: number }>,
    signal: AbortSignal,
  ) {
    const sources = hub.feeds
      .filter(({ module }) => memberships.has(module))
      .map(({ module, fetchEvents }) => ({ module, fetchEvents, since, until: memberships.get(module)!.cursor }))
    const result = await replay({
      sources,
      subjects: subscriber.subjects,
      limit: settings.PageLimit,
      retryMs: settings.RetryMinMs,
      signal,
      emit: (module, event) => subscriber.replayed(module, event),
      drained: () => subscriber.drained(),
    })
    for (const module of result.failed) subscriber.resync('replay-failed', since, module)
    subscriber.goLive(result.floors)
  }
}
