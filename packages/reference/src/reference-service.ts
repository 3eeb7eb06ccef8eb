import {
  buildInfo,
  createDatabase,
  createService,
  type Database,
  installServiceAuth,
  type Migrations,
  migrateToLatest,
  type Service,
} from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'

const HEALTH_PATH = '/private/v1/health'

export interface ReferenceServiceOptions {
  name: string
  /** The module's database URL (sqlite: or postgres:). */
  databaseUrl: string
  migrations: Migrations
  serviceSecret: string
  platformDevHost: string
  logger?: FastifyServerOptions['logger']
}

/**
 * What every reference module starts with: its own database, migrated (closed again if that
 * fails), and a service on the platform's domain guard that only the gateway's signed hop reaches
 * (X-Crm from anyone else is never believed), with its health endpoint open. The database closes
 * with the service.
 */
export async function openReferenceService<DB>(
  options: ReferenceServiceOptions,
): Promise<{ app: Service; database: Database<DB> }> {
  const database = createDatabase<DB>(options.databaseUrl)
  try {
    await migrateToLatest(database, options.migrations)
  } catch (error) {
    await database.destroy()
    throw error
  }
  const app = createService({
    name: options.name,
    healthPath: HEALTH_PATH,
    domainGuard: { domain: buildInfo?.domain ?? null, devHost: options.platformDevHost },
    logger: options.logger ?? false,
  })
  installServiceAuth(app, { secret: options.serviceSecret, exempt: [HEALTH_PATH] })
  app.addHook('onClose', () => database.destroy())
  return { app, database }
}
