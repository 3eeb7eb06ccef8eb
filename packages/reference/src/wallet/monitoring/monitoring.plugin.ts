import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { Database, Service } from '@atrium/platform'
import { Type } from 'typebox'
import type { WalletDatabase } from '../db/schema.ts'
import { readDatabaseStats, round } from './database-stats.ts'

export interface MonitoringPluginOptions {
  database: Database<WalletDatabase>
  /** Requests the whole wallet service has received so far. */
  requestsServed: () => number
}

const count = (description: string) => Type.Integer({ minimum: 0, description })
const ms = (description: string) => Type.Number({ minimum: 0, description })

const monitoringStats = {
  summary: 'Runtime and database metrics of the wallet module',
  response: {
    200: Type.Object({
      service: Type.Literal('wallet'),
      runtime: Type.Object({
        uptime_seconds: Type.Number({ description: 'Seconds since the wallet process started.' }),
        node_version: Type.String({ description: 'The Node.js version, e.g. v24.11.1.' }),
        pid: count('Process id.'),
        memory: Type.Object({
          rss_bytes: count('Resident set size of the process.'),
          heap_used_bytes: count('V8 heap in use.'),
          heap_total_bytes: count('V8 heap reserved.'),
          external_bytes: count('Memory of C++ objects bound to JavaScript objects (buffers).'),
        }),
        event_loop_delay_ms: Type.Object({
          p50: ms('Median event-loop delay since the start.'),
          p99: ms('99th percentile event-loop delay since the start.'),
          max: ms('Largest event-loop delay since the start.'),
        }),
        requests_served: count('Requests this process has received, this one included.'),
      }),
      database: Type.Object({
        dialect: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
        balances: count('Wallets: one per user and currency.'),
        transactions: Type.Object({
          total: count('Every transaction.'),
          pending: count('Transactions in state 1.'),
          completed: count('Transactions in state 2.'),
          failed: count('Transactions in state 3.'),
        }),
        events: count('Rows of the events feed (one per party and event).'),
        idempotency_keys: count('Stored Idempotency-Keys of send, pruned lazily.'),
        size_bytes: count('SQLite: the database file; PostgreSQL: the wallet tables with their indexes.'),
        query_latency_ms: ms('Round trip of one `select 1`.'),
      }),
    }),
  },
}

/**
 * GET /private/v1/monitoring_stats (spec: "Other module endpoints named"): the wallet process's
 * runtime metrics and its database's counts, size and latency, for operators' monitoring. Signed
 * hops only, like every /private/v1 route but health.
 */
export default async function monitoringPlugin(app: Service, { database, requestsServed }: MonitoringPluginOptions) {
  // 10 ms resolution: the histogram samples the loop that often, at negligible cost.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 })
  loopDelay.enable()
  app.addHook('onClose', async () => loopDelay.disable())

  app.get('/monitoring_stats', { schema: monitoringStats }, async () => {
    const memory = process.memoryUsage()
    const nsToMs = (ns: number) => round(ns / 1e6, 3)
    const samples = loopDelay.count > 0
    return {
      service: 'wallet' as const,
      runtime: {
        uptime_seconds: round(process.uptime(), 3),
        node_version: process.version,
        pid: process.pid,
        memory: {
          rss_bytes: memory.rss,
          heap_used_bytes: memory.heapUsed,
          heap_total_bytes: memory.heapTotal,
          external_bytes: memory.external,
        },
        event_loop_delay_ms: {
          p50: samples ? nsToMs(loopDelay.percentile(50)) : 0,
          p99: samples ? nsToMs(loopDelay.percentile(99)) : 0,
          max: samples ? nsToMs(loopDelay.max) : 0,
        },
        requests_served: requestsServed(),
      },
      database: await readDatabaseStats(database),
    }
  })
}
