import { createTimetickGenerator, type Service } from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import type { CrmConfig } from '../config.ts'
import { openReferenceService } from '../reference-service.ts'
import { crmMigrations } from './db/migrations/index.ts'
import type { CrmDatabase } from './db/schema.ts'
import setProfilesPlugin from './profiles/set-profiles.plugin.ts'
import userInfoPlugin from './profiles/user-info.plugin.ts'
import { createCrmStore } from './store.ts'

/**
 * Builds the reference CRM module with its database migrated: only what the gateway touches
 * (profiles in by POST /private/v1/set_profiles, GET /crm/v1/user_info out). See docs/crm.md.
 * The caller listens.
 */
export async function buildCrm(
  config: CrmConfig,
  { logger = false }: { logger?: FastifyServerOptions['logger'] } = {},
): Promise<Service> {
  const { app, database } = await openReferenceService<CrmDatabase>({
    name: 'crm',
    databaseUrl: config.CrmDB,
    migrations: crmMigrations,
    serviceSecret: config.ServiceSecret,
    platformDevHost: config.PlatformDevHost,
    logger,
    metrics: config.Metrics,
    readinessTimeoutMs: config.Readiness.TimeoutMs,
  })
  const store = createCrmStore(database, createTimetickGenerator({ node: config.NodeNumber }))

  app.register(userInfoPlugin, { prefix: '/crm/v1', store })
  app.register(setProfilesPlugin, { prefix: '/private/v1', store })
  return app
}
