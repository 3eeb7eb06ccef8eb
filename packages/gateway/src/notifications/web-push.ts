import type { FastifyBaseLogger } from 'fastify'
import type { Registry } from 'prom-client'
import type { GatewayConfig } from '../config.ts'
import type { EventHub } from '../events/event-hub.ts'
import { createOutboundClient } from '../outbound/outbound-request.ts'
import type { ModuleInstances } from '../proxy/module-instances.ts'
import type { GatewayStore } from '../store.ts'
import { createPushDispatcher, type PushDispatcher } from './push-dispatcher.ts'
import { createPushLookups } from './push-messages.ts'
import { createPushMetrics } from './push-metrics.ts'
import { createPushSender } from './push-sender.ts'
import { createPushSubscriptions, type PushSubscriptions } from './push-subscriptions.repository.ts'

export interface WebPushOptions {
  config: Pick<GatewayConfig, 'WebPush' | 'PushSending' | 'ServiceSecret'>
  store: GatewayStore
  /** The chat module's instances (Modules.chat), asked for a chat's type and name; undefined without one. */
  chat: ModuleInstances | undefined
  hub: EventHub
  log: FastifyBaseLogger
  /** Where the push queue and outcome metrics are registered. */
  registry: Registry
}

/**
 * Web Push on this node: the subscriptions, and the dispatcher only where pushes are sent, that is
 * with WebPush.Enabled on the one node with PushSending (spec: "Limits"). `close` stops sending.
 */
export function createWebPush({ config, store, chat, hub, log, registry }: WebPushOptions): {
  subscriptions: PushSubscriptions
  dispatcher: PushDispatcher | undefined
  close: () => Promise<void>
} {
  const settings = config.WebPush
  const subscriptions = createPushSubscriptions(store.db, store.dialect, store.nextTick, store.now)
  if (!settings.Enabled || !config.PushSending) return { subscriptions, dispatcher: undefined, close: async () => {} }

  const outbound = createOutboundClient({
    allowPrivateAddresses: settings.AllowPrivateEndpoints,
    timeoutMs: settings.TimeoutMs,
    allowSetting: 'WebPush.AllowPrivateEndpoints',
  })
  const dispatcher = createPushDispatcher({
    hub,
    subscriptions,
    sendPush: createPushSender({ settings, outbound }),
    lookups: createPushLookups({
      chat,
      serviceSecret: config.ServiceSecret,
      timeoutMs: settings.TimeoutMs,
      userName: async (crmId) => (await store.users.get(crmId))?.name ?? '',
      log,
    }),
    settings,
    log,
    metrics: createPushMetrics(registry, () => dispatcher.backlog()),
  })
  return {
    subscriptions,
    dispatcher,
    async close() {
      await dispatcher.close()
      outbound.close()
    },
  }
}
