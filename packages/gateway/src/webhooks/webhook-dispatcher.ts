import { setTimeout as sleep } from 'node:timers/promises'
import { type EventBatch, subjectOf, timetickAt, toWebhookEvent } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { App, Apps } from '../apps/apps.repository.ts'
import type { GatewayConfig } from '../config.ts'
import { createOutboundClient } from '../outbound/outbound-request.ts'
import { attemptDelivery } from './webhook-delivery.ts'
import type { WebhookMetrics } from './webhook-metrics.ts'
import type { WebhookDelivery, Webhooks } from './webhooks.repository.ts'

/** One module's events endpoint, as the event hub calls it (`GET /private/v1/events`). */
export interface WebhookFeed {
  module: string
  fetchEvents: (
    query: { since: number; subjects: readonly string[]; limit: number; wait: number },
    signal: AbortSignal,
  ) => Promise<EventBatch>
}

export interface WebhookDispatcherOptions {
  apps: Apps
  webhooks: Webhooks
  feeds: readonly WebhookFeed[]
  settings: GatewayConfig['Webhooks']
  /** Long-poll wait, replay window and back-off of events calls (the Events settings). */
  events: Pick<GatewayConfig['Events'], 'PollWaitMs' | 'ReplayMaxAgeSeconds' | 'RetryMinMs' | 'RetryMaxMs'>
  log: FastifyBaseLogger
  now?: () => number
  metrics?: WebhookMetrics
}

/** One app's webhooks from one module: read from its own cursor, delivered one request at a time, in order. */
interface Lane {
  app: App
  feed: WebhookFeed
  /** The cursor as last saved; undefined until the lane has read or set it. */
  cursor: number | undefined
  stop: AbortController
}

/** Pause before attempt `attempts + 1`: doubling from `baseMs`, capped at `maxMs`, half of it random (jitter). */
function retryDelayMs(attempts: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempts - 1, 30))
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
}

/**
 * The webhook dispatcher (spec: "Webhook rules"; "Delivery channels": per-app cursor), run only on
 * the node with PushSending. Each app with a callback URL and enabled event types gets a lane per
 * module that long-polls the module's events endpoint for `app:<id>` from the app's own cursor.
 * It reads the modules directly rather than through the hub's pollers: those poll only while SSE
 * streams are open, share one cursor among all subscribers and move it as soon as a batch was
 * handed over, whereas a webhook cursor may move only once the events are safely recorded. What a
 * lane reads becomes a pending delivery row in the same transaction that moves its cursor, so a
 * restart or a receiver that is down loses nothing; the row (and its delivery id) is retried with
 * back-off until it is delivered or, after Webhooks.MaxAttempts, dead-lettered. A lane reads no
 * further while its delivery is pending, so each app receives a module's events in order.
 */
export function createWebhookDispatcher(options: WebhookDispatcherOptions) {
  const { apps, webhooks, feeds, settings, events, log, now = Date.now, metrics } = options
  const client = createOutboundClient({
    allowPrivateAddresses: settings.AllowPrivateAddresses,
    timeoutMs: settings.TimeoutMs,
    allowSetting: 'Webhooks.AllowPrivateAddresses',
  })
  const lanes = new Map<string, Lane>()
  const running = new Set<Promise<void>>()
  let reloadTimer: NodeJS.Timeout | undefined
  let reloading: Promise<void> | undefined
  let closed = false

  /** Where a new lane starts: events committed since the app's webhook was set up, within the replay window. */
  async function startCursor(lane: Lane): Promise<number> {
    const { app, feed } = lane
    const saved = await webhooks.cursor(app.id, feed.module)
    if (saved !== undefined) return saved
    const head = (await feed.fetchEvents({ since: 0, subjects: [], limit: 1, wait: 0 }, lane.stop.signal)).LastTick
    const oldest = timetickAt(now() - events.ReplayMaxAgeSeconds * 1000)
    const start = Math.min(head, Math.max(app.timetick_update, oldest))
    await webhooks.saveCursor(app.id, feed.module, start)
    return start
  }

  /** Reads the next page for the app and records it as a delivery, or just moves the cursor when nothing is wanted. */
  async function read(lane: Lane) {
    const { app, feed } = lane
    lane.cursor ??= await startCursor(lane)
    const since = lane.cursor
    const batch = await feed.fetchEvents(
      { since, subjects: [subjectOf('app', app.id)], limit: settings.MaxEvents, wait: events.PollWaitMs },
      lane.stop.signal,
    )
    const types = new Set(JSON.parse(lane.app.event_types) as string[])
    const wanted = batch.Events.filter(
      (item) => item.AppId === app.id && item.TickUpdate > since && types.has(item.EventType),
    ).map((item) => toWebhookEvent(feed.module, item))
    const next = Math.max(since, batch.LastTick)
    if (wanted.length > 0) {
      const delivery = await webhooks.enqueue(app.id, feed.module, wanted, next)
      log.debug({ app: app.id, delivery: delivery.id, events: wanted.length }, 'webhooks: delivery recorded')
    } else if (next > since) {
      await webhooks.saveCursor(app.id, feed.module, next)
    }
    lane.cursor = next
  }

  /** Attempts a pending delivery until it is delivered or dead; the app's current callback and secret are used. */
  async function deliver(lane: Lane, delivery: WebhookDelivery) {
    const { signal } = lane.stop
    let { attempts, next_attempt: due } = delivery
    for (;;) {
      const wait = due - now()
      if (wait > 0) await sleep(wait, undefined, { signal })
      const { app } = lane
      const result = await attemptDelivery(
        client,
        {
          url: app.callback_url,
          secret: app.webhook_secret,
          deliveryId: delivery.id,
          body: delivery.body,
          attempt: attempts + 1,
        },
        signal,
      )
      attempts++
      // Each attempt is counted once its outcome is stored, so a scrape that sees the count sees the queue agree.
      if (result.ok) {
        await webhooks.delivered(delivery.id)
        metrics?.attempted('delivered')
        return
      }
      const dead = result.permanent || attempts >= settings.MaxAttempts
      due = now() + retryDelayMs(attempts, settings.BackoffBaseMs, settings.BackoffMaxMs)
      await webhooks.failed(delivery.id, {
        attempts,
        nextAttempt: dead ? 0 : due,
        status: result.status,
        error: result.error,
        dead,
      })
      metrics?.attempted(dead ? 'dead' : 'failed')
      const context = { app: app.id, delivery: delivery.id, attempts, error: result.error }
      if (dead) {
        log.warn(context, 'webhooks: delivery moved to the dead letters')
        return
      }
      if (attempts === 1) log.info(context, 'webhooks: delivery failed; retrying with back-off')
    }
  }

  async function run(lane: Lane) {
    const { signal } = lane.stop
    let failures = 0
    while (!signal.aborted) {
      try {
        const pending = await webhooks.nextPending(lane.app.id, lane.feed.module)
        if (pending) await deliver(lane, pending)
        else await read(lane)
        failures = 0
      } catch (error) {
        if (signal.aborted) return
        failures++
        const context = { app: lane.app.id, module: lane.feed.module, failures, err: error }
        if (failures === 1) log.warn(context, 'webhooks: reading the module failed; retrying with back-off')
        else log.debug(context, 'webhooks: reading the module still fails')
        try {
          await sleep(retryDelayMs(failures, events.RetryMinMs, events.RetryMaxMs), undefined, { signal })
        } catch {
          return
        }
      }
    }
  }

  function start(app: App, feed: WebhookFeed) {
    const lane: Lane = { app, feed, cursor: undefined, stop: new AbortController() }
    lanes.set(`${app.id}:${feed.module}`, lane)
    const done = run(lane)
      .catch((error) => log.error({ app: app.id, module: feed.module, err: error }, 'webhooks: a lane failed'))
      .finally(() => running.delete(done))
    running.add(done)
  }

  /** Starts lanes for apps that got webhooks, stops those of apps that lost them, and hands the rest the app's current row. */
  async function reload() {
    const wanted = new Map<string, { app: App; feed: WebhookFeed }>()
    for (const app of await apps.withWebhooks()) {
      for (const feed of feeds) wanted.set(`${app.id}:${feed.module}`, { app, feed })
    }
    if (closed) return
    for (const [key, lane] of lanes) {
      if (wanted.has(key)) continue
      lane.stop.abort()
      lanes.delete(key)
    }
    for (const [key, { app, feed }] of wanted) {
      const lane = lanes.get(key)
      if (lane) lane.app = app
      else start(app, feed)
    }
  }

  function scheduleReload() {
    if (closed) return
    reloadTimer = setTimeout(() => {
      reloading = reload()
        .catch((error) => log.error({ err: error }, 'webhooks: could not read the apps'))
        .finally(scheduleReload)
    }, settings.ReloadMs)
    reloadTimer.unref()
  }

  return {
    /** Reads the apps and starts their lanes, then re-reads them every Webhooks.ReloadMs. */
    async start(): Promise<void> {
      await reload()
      scheduleReload()
    },

    /** Stops every lane (a delivery in flight stays pending, to be resumed on the next start). */
    async close(): Promise<void> {
      closed = true
      clearTimeout(reloadTimer)
      await reloading
      for (const lane of lanes.values()) lane.stop.abort()
      lanes.clear()
      await Promise.all(running)
      client.close()
    },
  }
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>
