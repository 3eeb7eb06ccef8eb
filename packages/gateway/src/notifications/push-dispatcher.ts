import { type BroadcastEvent, subjectOf } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from '../config.ts'
import type { EventHub, HubSubscriber } from '../events/event-hub.ts'
import { addresseeKeyOf } from '../events/module-poller.ts'
import { type PushLookups, type PushMessage, pushMessageFor } from './push-messages.ts'
import type { PushMetrics } from './push-metrics.ts'
import type { PushOutcome, SendPush } from './push-sender.ts'
import type { PushSubscription, PushSubscriptions } from './push-subscriptions.repository.ts'

export interface PushDispatcherOptions {
  hub: EventHub
  subscriptions: PushSubscriptions
  sendPush: SendPush
  lookups: PushLookups
  settings: GatewayConfig['WebPush']
  log: FastifyBaseLogger
  /** Counts settled sends by outcome; nothing when omitted. */
  metrics?: Pick<PushMetrics, 'settled'>
}

/** What a push to each of a user's browsers came to. */
export interface PushTally {
  sent: number
  removed: number
  failed: number
}

interface Job {
  crmId: number
  event: BroadcastEvent
}

interface Watch {
  subscriber: HubSubscriber
  leave: () => void
}

// Pushes in flight at once: enough to hide a push service's latency, few enough to stay polite.
const CONCURRENCY = 16

/**
 * The push dispatcher of the node with PushSending (ARCHITECTURE.md, "Events"). Every user with a
 * Web Push subscription gets a server-side subscriber in the event hub, so the user's subject is
 * polled like an open SSE stream's and the poller's normalized events reach the dispatcher. Each
 * event becomes at most one notification per browser; the sender's own message is never pushed
 * to the sender (pushMessageFor).
 *
 * Memory stays bounded: per watched user, one small subscriber (no events are kept in it);
 * subscriptions are read from the database per notification, not held; waiting notifications and
 * pending retries together are capped at WebPush.MaxQueued, beyond which they are dropped and
 * logged (spec: "Web Push rules", delivery is best effort).
 */
export function createPushDispatcher({
  hub,
  subscriptions,
  sendPush,
  lookups,
  settings,
  log,
  metrics,
}: PushDispatcherOptions) {
  const watched = new Map<number, Watch>()
  const queue: Job[] = []
  const retries = new Set<NodeJS.Timeout>()
  let inFlight = 0
  let idle: (() => void) | undefined
  let dropped = 0
  let closed = false
  let refreshTimer: NodeJS.Timeout | undefined

  /** A subscriber that turns the user's events into jobs, each event once, in the poller's order. */
  function serverSubscriber(crmId: number): HubSubscriber {
    const subjects = [subjectOf('user', crmId)]
    const modules = new Map<string, { chunk: number; last: number }>()
    return {
      subjects,
      keys: new Set(subjects.map(addresseeKeyOf)),
      attach(module, chunk, last) {
        modules.set(module, { chunk, last })
      },
      offer(module, chunk, event, muted) {
        const state = modules.get(module)
        if (!state || state.chunk !== chunk || event.tick <= state.last) return
        state.last = event.tick
        // A chat the user muted makes no notification (MemberRole.Muted).
        if (!muted) enqueue({ crmId, event })
      },
      close() {
        unwatch(crmId)
      },
    }
  }

  /** Starts pushing the user's events from now on (from each module's head, so nothing old is pushed). */
  async function watch(crmId: number): Promise<void> {
    if (closed || watched.has(crmId)) return
    const entry: Watch = { subscriber: serverSubscriber(crmId), leave: () => {} }
    watched.set(crmId, entry)
    try {
      const joined = await hub.subscribe(entry.subscriber, (_module, membership) => membership.head)
      if (watched.get(crmId) === entry) entry.leave = joined.leave
      else joined.leave()
    } catch (error) {
      if (watched.get(crmId) === entry) watched.delete(crmId)
      log.error({ crmId, err: error }, 'push: could not watch the events of a user')
    }
  }

  function unwatch(crmId: number) {
    const entry = watched.get(crmId)
    if (!entry) return
    watched.delete(crmId)
    entry.leave()
  }

  /** Stops watching a user who has no subscription left. */
  async function forgetIfUnsubscribed(crmId: number): Promise<void> {
    if (watched.has(crmId) && !(await subscriptions.has(crmId))) unwatch(crmId)
  }

  /** Brings the watched users in line with the database, where other nodes add subscriptions. */
  async function refresh(): Promise<void> {
    const users = new Set(await subscriptions.subscribedUsers())
    for (const crmId of watched.keys()) if (!users.has(crmId)) unwatch(crmId)
    // One at a time: the first join starts each module's poll from its head, and the others then
    // join running polls instead of each asking the module for its head at once.
    for (const crmId of users) await watch(crmId)
  }

  function backlog(): number {
    return queue.length + retries.size
  }

  function enqueue(job: Job) {
    if (closed) return
    if (backlog() >= settings.MaxQueued) {
      // Logged at the first drop and then every thousandth, so a flood does not flood the log too.
      if (dropped++ % 1000 === 0) log.warn({ dropped }, 'push: too many notifications waiting; dropping')
      return
    }
    queue.push(job)
    pump()
  }

  /** Counts a piece of sending work in flight until it ends, so close() can wait for it. */
  function track(work: Promise<unknown>, context: object) {
    inFlight++
    work
      .catch((error) => log.error({ ...context, err: error }, 'push: a notification failed'))
      .finally(() => {
        inFlight--
        pump()
        if (inFlight === 0 && queue.length === 0) idle?.()
      })
  }

  function pump() {
    while (inFlight < CONCURRENCY && queue.length > 0) {
      const job = queue.shift()!
      track(handle(job), { crmId: job.crmId })
    }
  }

  async function handle({ crmId, event }: Job): Promise<void> {
    const message = await pushMessageFor(crmId, event, lookups)
    if (!message) return
    const list = await subscriptions.listFor(crmId)
    if (list.length === 0) return unwatch(crmId)
    const payload = JSON.stringify(message)
    await Promise.all(list.map((subscription) => attempt(subscription, payload, 1)))
  }

  /** One try of one push; a retryable failure schedules the next try until MaxAttempts. */
  async function attempt(subscription: PushSubscription, payload: string, tries: number): Promise<PushOutcome> {
    const outcome = await sendPush(subscription, payload)
    if (outcome.kind === 'retry' && tries < settings.MaxAttempts && !closed && backlog() < settings.MaxQueued) {
      const timer = setTimeout(
        () => {
          retries.delete(timer)
          track(attempt(subscription, payload, tries + 1), { subscription: subscription.id })
        },
        settings.RetryMs * 2 ** (tries - 1),
      )
      timer.unref()
      retries.add(timer)
      log.debug({ subscription: subscription.id, tries, error: outcome.error }, 'push: will try again')
      return outcome
    }
    await settle(subscription, outcome, tries)
    return outcome
  }

  async function settle(subscription: PushSubscription, outcome: PushOutcome, tries: number) {
    metrics?.settled(outcome.kind === 'sent' || outcome.kind === 'gone' ? outcome.kind : 'failed')
    if (outcome.kind === 'sent') return subscriptions.recordSuccess(subscription)
    if (outcome.kind === 'gone') {
      log.info({ subscription: subscription.id, status: outcome.status }, 'push: the browser unsubscribed; removed')
      await subscriptions.removeGone(subscription.id)
      return forgetIfUnsubscribed(subscription.crm_id)
    }
    log.warn({ subscription: subscription.id, tries, error: outcome.error }, 'push: not delivered')
    await subscriptions.recordFailure(subscription.id, outcome.error)
  }

  async function sendOnce(subscription: PushSubscription, message: PushMessage): Promise<PushOutcome> {
    const outcome = await sendPush(subscription, JSON.stringify(message))
    await settle(subscription, outcome, 1)
    return outcome
  }

  return {
    watch,
    forgetIfUnsubscribed,

    /** Notifications waiting: queued and retries scheduled. */
    backlog,

    /**
     * Watches every user with a subscription, in the background (a module that is slow to answer
     * must not hold up the gateway's start), and re-reads them every WebPush.RefreshSeconds.
     */
    start(): void {
      const run = () => {
        refresh()
          .catch((error) => log.error({ err: error }, 'push: could not read the subscribed users'))
          .finally(() => {
            if (closed) return
            refreshTimer = setTimeout(run, settings.RefreshSeconds * 1000)
            refreshTimer.unref()
          })
      }
      run()
    },

    /**
     * Sends a message to each of the user's browsers now, once each (POST
     * /auth/v1/notifications/test): no retries, so the caller learns at once what happened.
     */
    async sendNow(crmId: number, message: PushMessage): Promise<PushTally> {
      const tally: PushTally = { sent: 0, removed: 0, failed: 0 }
      await Promise.all(
        (await subscriptions.listFor(crmId)).map(async (subscription) => {
          const outcome = await sendOnce(subscription, message)
          if (outcome.kind === 'sent') tally.sent++
          else if (outcome.kind === 'gone') tally.removed++
          else tally.failed++
        }),
      )
      return tally
    },

    /** Sends a message to one browser now, once (the operator panel's Test action), and settles it as a push. */
    sendOnce,

    /** Users watched now (for diagnostics and tests). */
    watching(): number[] {
      return [...watched.keys()]
    },

    /** Stops watching and retrying; waits for the pushes in flight. */
    async close(): Promise<void> {
      closed = true
      clearTimeout(refreshTimer)
      for (const timer of retries) clearTimeout(timer)
      retries.clear()
      queue.length = 0
      for (const crmId of [...watched.keys()]) unwatch(crmId)
      if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve))
    },
  }
}

export type PushDispatcher = ReturnType<typeof createPushDispatcher>
