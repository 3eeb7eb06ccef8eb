import { timetickTime } from '@atrium/platform'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

/** Upper bounds of the event lag buckets, in seconds: from a long-poll's wake-up to a module back from an outage. */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

/**
 * The event hub's metrics (docs/operations.md, "Metrics"): SSE streams open and events written to
 * them, and per module the events the pollers received, their lag and failed polls. Events written
 * to streams are counted in a plain number read at scrape time: a fan-out writes one per stream.
 */
export function createEventMetrics(registry: Registry) {
  let delivered = 0
  let reported = 0
  const streams = new Gauge({
    name: 'atrium_sse_streams',
    help: 'SSE streams (GET /auth/v1/subscribe) open on this gateway.',
    registers: [registry],
  })
  new Counter({
    name: 'atrium_sse_deliveries_total',
    help: 'Events written to SSE streams (one per stream an event went to, replays included).',
    registers: [registry],
    collect() {
      this.inc(delivered - reported)
      reported = delivered
    },
  })
  const received = new Counter({
    name: 'atrium_events_received_total',
    help: "Events the gateway's pollers received from a module.",
    labelNames: ['module'] as const,
    registers: [registry],
  })
  const lag = new Histogram({
    name: 'atrium_event_lag_seconds',
    help: 'Time from an event’s commit in its module (its tick) to its arrival at the gateway poller.',
    labelNames: ['module'] as const,
    buckets: LAG_BUCKETS,
    registers: [registry],
  })
  const pollFailures = new Counter({
    name: 'atrium_event_poll_failures_total',
    help: 'Calls to a module’s events endpoint that failed (refused, 5xx, timeout); the poller retries with back-off.',
    labelNames: ['module'] as const,
    registers: [registry],
  })

  return {
    streamOpened: () => streams.inc(),
    streamClosed: () => streams.dec(),
    delivered: () => {
      delivered++
    },
    /** A poller received these event ticks of a module at `now` (ms). */
    received(module: string, ticks: readonly number[], now: number) {
      if (ticks.length === 0) return
      received.inc({ module }, ticks.length)
      for (const tick of ticks) lag.observe({ module }, Math.max(0, now - timetickTime(tick)) / 1000)
    },
    pollFailed: (module: string) => pollFailures.inc({ module }),
  }
}

export type EventMetrics = ReturnType<typeof createEventMetrics>
