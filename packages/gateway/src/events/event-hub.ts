import type { BroadcastEvent } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from '../config.ts'
import type { ModuleDirectory } from '../proxy/module-instances.ts'
import type { EventCursors } from './event-cursors.repository.ts'
import type { EventMetrics } from './event-metrics.ts'
import { createModuleEvents, type FetchEvents } from './module-events.ts'
import { type AddressedEvent, createModulePoller, type Membership, type ModulePoller } from './module-poller.ts'
import { toChunk } from './sse-chunks.ts'
import type { Subscriber } from './subscriber.ts'

export interface EventHubOptions {
  /** The modules of the Modules setting: every one is polled, at whichever of its instances is up. */
  modules: ModuleDirectory
  settings: GatewayConfig['Events']
  serviceSecret: string
  cursors: EventCursors
  log: FastifyBaseLogger
  now?: () => number
  metrics?: EventMetrics
}

/**
 * What the hub needs of a subscriber: an SSE stream (subscriber.ts) or a server-side one, such as
 * the push dispatcher's subscriber of a user with Web Push subscriptions.
 */
export type HubSubscriber = Pick<Subscriber, 'subjects' | 'keys' | 'attach' | 'close'> &
  Partial<Pick<Subscriber, 'signal'>> & {
    /**
     * A live event of a module's poller; `muted` when the addressee muted its chat (the item's
     * `Muted`): streams show it all the same, notifications leave it out.
     */
    offer(module: string, chunk: number, event: BroadcastEvent, muted: boolean): void
  }

/** A module's events endpoint with this gateway's poller on it. */
export interface ModuleFeed {
  module: string
  fetchEvents: FetchEvents
  poller: ModulePoller
}

/**
 * The event hub: one poller per module feeds it normalized events, and it hands each event only to
 * the subscribers it is addressed to (a CrmId item to that user's streams, an AppId item to the
 * streams of that app's owners and of the app itself). Nobody receives another person's events.
 */
export function createEventHub({ modules, settings, serviceSecret, cursors, log, now, metrics }: EventHubOptions) {
  const subscribers = new Set<HubSubscriber>()
  const byAddressee = new Map<string, Set<HubSubscriber>>()
  const frames = new WeakMap<BroadcastEvent, Buffer>()

  function deliver(module: string, chunk: number, events: AddressedEvent[]) {
    for (const { to, event, muted } of events) {
      const addressed = byAddressee.get(to)
      if (!addressed) continue
      for (const subscriber of addressed) subscriber.offer(module, chunk, event, muted === true)
    }
  }

  const feeds: ModuleFeed[] = modules.names().map((module) => {
    const fetchEvents = createModuleEvents({
      instances: modules.get(module)!,
      serviceSecret,
      timeoutMs: settings.PollTimeoutMs,
    })
    const poller = createModulePoller({
      module,
      fetchEvents,
      cursors,
      settings,
      onEvents: deliver,
      log,
      now,
      metrics,
    })
    return { module, fetchEvents, poller }
  })

  function remove(subscriber: HubSubscriber) {
    subscribers.delete(subscriber)
    for (const key of subscriber.keys) {
      const addressed = byAddressee.get(key)
      addressed?.delete(subscriber)
      if (addressed?.size === 0) byAddressee.delete(key)
    }
  }

  return {
    feeds,

    /** The SSE frame of an event as an HTTP/1.1 chunk, serialised and encoded once however many streams it goes to. */
    frameOf(event: BroadcastEvent): Buffer {
      let frame = frames.get(event)
      if (frame === undefined) {
        frame = toChunk(`id: ${event.tick}\ndata: ${JSON.stringify(event)}\n\n`)
        frames.set(event, frame)
      }
      return frame
    },

    /**
     * Indexes the subscriber by addressee and joins its subjects to every module's poller. Each
     * module is attached as soon as its join returns (before any later batch can be handed over),
     * with `floor(module, membership)` as the tick up to which its events are dropped. Returns the
     * memberships by module and a function that undoes all of it.
     */
    async subscribe(
      subscriber: HubSubscriber,
      floor: (module: string, membership: Membership) => number,
    ): Promise<{ memberships: Map<string, Membership>; leave: () => void }> {
      subscribers.add(subscriber)
      for (const key of subscriber.keys) {
        let addressed = byAddressee.get(key)
        if (!addressed) {
          addressed = new Set()
          byAddressee.set(key, addressed)
        }
        addressed.add(subscriber)
      }
      const memberships = new Map<string, Membership>()
      let left = false
      const leave = () => {
        left = true
        remove(subscriber)
        for (const membership of memberships.values()) membership.leave()
        memberships.clear()
      }
      if (subscriber.subjects.length === 0) return { memberships, leave }
      try {
        await Promise.all(
          feeds.map(async ({ module, poller }) => {
            const membership = await poller.join(subscriber.subjects)
            if (left) return membership.leave()
            memberships.set(module, membership)
            subscriber.attach(module, membership.chunk, floor(module, membership))
          }),
        )
      } catch (error) {
        leave()
        throw error
      }
      return { memberships, leave }
    },

    /**
     * Writes a frame that is not an event (typing, docs/events.md) to the SSE streams of these
     * people on this gateway: no tick, no replay, nothing stored. Server-side subscribers (Web
     * Push) have no stream and take none.
     */
    signal(crmIds: readonly number[], frame: Buffer): void {
      for (const crmId of crmIds) {
        for (const subscriber of byAddressee.get(`m:${crmId}`) ?? []) subscriber.signal?.(frame)
      }
    },

    /** Subscribers connected to this gateway now. */
    get size() {
      return subscribers.size
    },

    /** Ends every stream and stops the pollers, saving their cursors. */
    async close(): Promise<void> {
      for (const subscriber of [...subscribers]) subscriber.close()
      await Promise.all(feeds.map(({ poller }) => poller.close()))
    },
  }
}

export type EventHub = ReturnType<typeof createEventHub>
