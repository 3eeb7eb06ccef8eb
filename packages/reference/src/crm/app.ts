import {
  buildInfo,
  createDatabase,
  createService,
  createTimetickGenerator,
  installServiceAuth,
  migrateToLatest,
  type Service,
} from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import type { CrmConfig } from '../config.ts'
import { crmMigrations } from './db/migrations/index.ts'
import type { CrmDatabase } from './db/schema.ts'
import setProfilesPlugin from './profiles/set-profiles.plugin.ts'
import userInfoPlugin from './profiles/user-info.plugin.ts'
import { createCrmStore } from './store.ts'

const HEALTH_PATH = '/private/v1/health'

/**
 * Builds the reference CRM module with its database migrated: only what the gateway touches
 * (profiles in by POST /private/v1/set_profiles, GET /crm/v1/user_info out). See docs/crm.md.
 * The caller listens.
 */
export async function buildCrm(
  config: CrmConfig,
  { logger = false }: { logger?: FastifyServerOptions['logger'] } = {},
): Promise<Service> {
  const database = createDatabase<CrmDatabase>(config.CrmDB)
  try {
    await migrateToLatest(database, crmMigrations)
  } catch (error) {
    await database.destroy()
    throw error
  }
  const store = createCrmStore(database, createTimetickGenerator({ node: config.NodeNumber }))

  const app = createService({
    name: 'crm',
    healthPath: HEALTH_PATH,
    domainGuard: { domain: buildInfo?.domain ?? null, devHost: config.PlatformDevHost },
    logger,
  })
  // Only the gateway's signed hop reaches the CRM: X-Crm from anyone else is never believed.
  installServiceAuth(app, { secret: config.ServiceSecret, exempt: [HEALTH_PATH] })
  app.addHook('onClose', () => database.destroy())

  app.register(userInfoPlugin, { prefix: '/crm/v1', store })
  app.register(setProfilesPlugin, { prefix: '/private/v1', store })
  return app
}
