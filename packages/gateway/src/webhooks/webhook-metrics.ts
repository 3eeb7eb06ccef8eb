import { Counter, Gauge, type Registry } from 'prom-client'
import type { Webhooks } from './webhooks.repository.ts'

/**
 * The webhook dispatcher's metrics: `atrium_webhook_queue` (deliveries waiting, by state, counted
 * in the database when scraped, so every lane and restart is included) and
 * `atrium_webhook_attempts_total` by outcome.
 */
export function createWebhookMetrics(registry: Registry, webhooks: Pick<Webhooks, 'countByState'>) {
  new Gauge({
    name: 'atrium_webhook_queue',
    help: 'Webhook deliveries in the queue: pending (to be attempted) and dead (given up, in the dead letters).',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const counts = await webhooks.countByState()
      this.set({ state: 'pending' }, counts.pending)
      this.set({ state: 'dead' }, counts.dead)
    },
  })
  const attempts = new Counter({
    name: 'atrium_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: delivered, failed (to be retried), dead (the last one).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  return {
    attempted(outcome: 'delivered' | 'failed' | 'dead') {
      attempts.inc({ outcome })
    },
  }
}

export type WebhookMetrics = ReturnType<typeof createWebhookMetrics>
