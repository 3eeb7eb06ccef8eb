import { PassThrough } from 'node:stream'
import { ApiError, MAX_TIMETICK, parseTimetick, type Service, timetickTime } from '@atrium/platform'
import { Type } from 'typebox'
import type { Apps } from '../apps/apps.repository.ts'
import type { GatewayConfig } from '../config.ts'
import type { EventHub } from './event-hub.ts'
import { replay } from './replay.ts'
import { subjectsOf } from './subjects.ts'
import { createSubscriber, type Subscriber } from './subscriber.ts'

export interface EventsPluginOptions {
  hub: EventHub
  apps: Apps
  settings: GatewayConfig['Events']
  now: () => number
}

const subscribeSchema = {
  summary: 'Stream the caller’s events (Server-Sent Events)',
  description:
    'A `text/event-stream` of BroadcastEvent messages (`id: <tick>`, `data: <JSON>`). Without `since` the ' +
    'stream starts fresh; with `since` (or `Last-Event-ID`) the missed events are replayed first. See docs/events.md.',
  querystring: Type.Object(
    {
      since: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: MAX_TIMETICK,
          description: 'The largest tick the client has seen: events after it are replayed, then live ones follow.',
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
export default async function eventsPlugin(app: Service, { hub, apps, settings, now }: EventsPluginOptions) {
  app.get(
    '/subscribe',
    { schema: subscribeSchema, exposeHeadRoute: false, config: { envelope: false } },
    async function subscribe(request, reply) {
      const { caller } = request
      if (caller.keyType === '') {
        throw new ApiError('SessionRequired', 'Subscribing to events needs a signed-in session or an API key.')
      }
      const requested = resumeTick(request.query.since, request.headers['last-event-id'])
      const tooOld = requested !== undefined && timetickTime(requested) < now() - settings.ReplayMaxAgeSeconds * 1000
      const since = tooOld ? undefined : requested
      const all = await subjectsOf(caller, apps)
      // One subscriber's subjects share one long-poll, so its events of a module stay in cursor order.
      if (all.length > settings.ChunkSubjects) {
        request.log.warn(
          { subjects: all.length },
          'events: more subjects than Events.ChunkSubjects; the rest are not streamed',
        )
      }
      const subjects = all.slice(0, settings.ChunkSubjects)

      const stream = new PassThrough()
      const stopped = new AbortController()
      let leave = () => {}
      const subscriber = createSubscriber({
        stream,
        subjects,
        frameOf: hub.frameOf,
        maxQueued: settings.MaxQueuedEvents,
        heartbeatMs: settings.HeartbeatSeconds * 1000,
        onClose: () => {
          stopped.abort()
          leave()
        },
      })
      reply.raw.once('close', () => subscriber.close())
      // Without since, each module's events count from the head it had when the stream opened.
      const joined = await hub.subscribe(subscriber, (_module, membership) => since ?? membership.head)
      leave = joined.leave
      if (subscriber.closed) leave()

      reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-accel-buffering', 'no')
        .send(stream)
      if (tooOld) {
        const heads = [...joined.memberships.values()].map((membership) => membership.head)
        subscriber.resync('too-old', Math.max(0, ...heads))
      } else {
        // The first bytes send the headers, so the client knows its subjects are polled from here on.
        subscriber.comment('subscribed')
      }
      if (since === undefined) subscriber.goLive(new Map())
      else {
        replayMissed(subscriber, since, joined.memberships, stopped.signal).catch((error) => {
          if (stopped.signal.aborted) return
          request.log.error({ err: error }, 'events: replay failed')
          subscriber.close()
        })
      }
      return reply
    },
  )

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
      emit: subscriber.replayed,
      drained: subscriber.drained,
    })
    for (const module of result.failed) subscriber.resync('replay-failed', since, module)
    subscriber.goLive(result.floors)
  }
}
