import { Counter, Gauge, type Registry } from 'prom-client'
import type { Database } from './database.ts'

/**
 * Registers a database's metrics: `atrium_db_query_errors_total`, and on PostgreSQL the pool's
 * connections by state (`total`, `idle`, `waiting` for a connection), read when scraped.
 */
export function installDatabaseMetrics<DB>(registry: Registry, database: Database<DB>): void {
  const errors = new Counter({
    name: 'atrium_db_query_errors_total',
    help: 'Queries that failed (constraint violations included, which some operations expect).',
    registers: [registry],
  })
  database.onQueryError(() => errors.inc())
  if (database.poolStats() === undefined) return
  new Gauge({
    name: 'atrium_db_pool_connections',
    help: 'PostgreSQL pool connections: total open, idle among them, and queries waiting for one.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = database.poolStats()
      if (!stats) return
      this.set({ state: 'total' }, stats.total)
      this.set({ state: 'idle' }, stats.idle)
      this.set({ state: 'waiting' }, stats.waiting)
    },
  })
}
