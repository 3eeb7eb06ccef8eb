import { Counter, Gauge, type Registry } from 'prom-client'

/**
 * The push dispatcher's metrics: `atrium_push_queue` (notifications waiting to be sent or retried,
 * read when scraped) and `atrium_push_outcomes_total` by outcome.
 */
export function createPushMetrics(registry: Registry, backlog: () => number) {
  new Gauge({
    name: 'atrium_push_queue',
    help: 'Web Push notifications waiting: queued for sending and retries scheduled (capped at WebPush.MaxQueued).',
    registers: [registry],
    collect() {
      this.set(backlog())
    },
  })
  const outcomes = new Counter({
    name: 'atrium_push_outcomes_total',
    help: 'Web Push sends settled, by outcome: sent, gone (the browser unsubscribed), failed (after the last try).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  return {
    settled(outcome: 'sent' | 'gone' | 'failed') {
      outcomes.inc({ outcome })
    },
  }
}

export type PushMetrics = ReturnType<typeof createPushMetrics>
