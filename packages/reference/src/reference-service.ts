import {
  buildInfo,
  createDatabase,
  createService,
  type Database,
  databaseCheck,
  installDatabaseMetrics,
  installReadiness,
  installServiceAuth,
  type MetricsListenerSettings,
  type Migrations,
  migrateToLatest,
  processVersion,
  type Service,
  warnNewerSchema,
} from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import referencePackage from '../package.json' with { type: 'json' }

const HEALTH_PATH = '/private/v1/health'
const READY_PATH = '/private/v1/ready'

export interface ReferenceServiceOptions {
  name: string
  /** The module's database URL (sqlite: or postgres:). */
  databaseUrl: string
  migrations: Migrations
  serviceSecret: string
  platformDevHost: string
  logger?: FastifyServerOptions['logger']
  /** The Metrics settings: the metrics listener. */
  metrics: MetricsListenerSettings
  /** How long the database has to answer a readiness check (Readiness.TimeoutMs). */
  readinessTimeoutMs: number
}

/**
 * What every reference module starts with: its own database, migrated (closed again if that
 * fails), and a service on the platform's domain guard that only the gateway's signed hop reaches
 * (X-Crm from anyone else is never believed), with its health and readiness endpoints open and
 * its metrics at `/private/v1/metrics` (signed) and on the metrics listener. The database closes
 * with the service.
 */
export async function openReferenceService<DB>(
  options: ReferenceServiceOptions,
): Promise<{ app: Service; database: Database<DB> }> {
  const database = createDatabase<DB>(options.databaseUrl)
  let newerSchema: string[] = []
  try {
    await migrateToLatest(database, options.migrations, { onNewerSchema: (names) => (newerSchema = names) })
  } catch (error) {
    await database.destroy()
    throw error
  }
  const app = createService({
    name: options.name,
    // The reference package holds three processes, each versioned in its `processVersions`.
    version: processVersion(referencePackage, options.name),
    healthPath: HEALTH_PATH,
    domainGuard: { domain: buildInfo?.domain ?? null, devHost: options.platformDevHost },
    logger: options.logger ?? false,
    metrics: { path: '/private/v1/metrics', listener: options.metrics },
  })
  warnNewerSchema(app.log, newerSchema)
  installServiceAuth(app, { secret: options.serviceSecret, exempt: [HEALTH_PATH, READY_PATH] })
  app.addHook('onClose', () => database.destroy())
  installDatabaseMetrics(app.metrics.registry, database)
  installReadiness(app, {
    path: READY_PATH,
    timeoutMs: options.readinessTimeoutMs,
    checks: { database: databaseCheck(database) },
  })
  return { app, database }
}
