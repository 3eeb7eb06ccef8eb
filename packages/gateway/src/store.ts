import {
  createDatabase,
  createTimetickGenerator,
  type Database,
  migrateToLatest,
  type TimetickGenerator,
  type TimetickOptions,
} from '@atrium/platform'
import { createApps } from './apps/apps.repository.ts'
import { createApiKeys } from './auth/api-keys.repository.ts'
import { createPasskeys } from './auth/passkeys.repository.ts'
import { createUserKeys } from './auth/user-keys.repository.ts'
import type { GatewayConfig } from './config.ts'
import { gatewayMigrations } from './db/migrations/index.ts'
import type { GatewayDatabase } from './db/schema.ts'
import { createFederation } from './federation/federation.repository.ts'
import { createMcpGrants } from './mcp/grants.repository.ts'
import { createMcpAudit } from './mcp/mcp-audit.repository.ts'
import { createRoutes } from './proxy/routes.repository.ts'
import { createInvalidations, type InvalidationRelay } from './server/invalidations.ts'
import { createSessions } from './sessions/sessions.repository.ts'
import { createUsers } from './users/users.repository.ts'

/**
 * Opens the gateway database, migrates it to the latest schema and returns the store on it; the
 * store's `close` releases the database. `timetick` is the node number (and, for a CLI run, the
 * lane) the store writes ids with.
 */
export async function openGatewayStore(
  config: GatewayConfig,
  timetick: Pick<TimetickOptions, 'node' | 'lane'>,
  now?: () => number,
  relay?: InvalidationRelay,
) {
  const database = createDatabase<GatewayDatabase>(config.GatewayDB)
  let newerSchema: string[] = []
  try {
    await migrateToLatest(database, gatewayMigrations, { onNewerSchema: (names) => (newerSchema = names) })
  } catch (error) {
    await database.destroy()
    throw error
  }
  const store = createGatewayStore(database, createTimetickGenerator(timetick), config, now, relay)
  // newerSchema: migrations a newer gateway applied, for the log (an older build after a rollback).
  return Object.assign(store, { close: () => database.destroy(), newerSchema })
}

/** The gateway's shared data access; capabilities that need each other get the same objects from app.ts. */
function createGatewayStore(
  database: Database<GatewayDatabase>,
  nextTick: TimetickGenerator,
  config: GatewayConfig,
  now: () => number = Date.now,
  relay?: InvalidationRelay,
) {
  const { db } = database
  const invalidations = createInvalidations(relay)
  return {
    /** The open database itself, for its metrics and the readiness check. */
    database,
    db,
    dialect: database.dialect,
    nextTick,
    now,
    /** Cache invalidations shared with the node's other workers (server/invalidations.ts). */
    invalidations,
    users: createUsers(db, nextTick, now, invalidations),
    sessions: createSessions(db, database.dialect, config.Sessions, now, invalidations),
    apps: createApps(db, nextTick, now),
    apiKeys: createApiKeys(db, nextTick, now, invalidations),
    userKeys: createUserKeys(db, nextTick, now),
    passkeys: createPasskeys(db, nextTick, now),
    federation: createFederation(db, nextTick, now),
    routes: createRoutes(db, nextTick, now, { modules: Object.keys(config.Modules) }),
    mcpGrants: createMcpGrants(db, nextTick, now),
    mcpAudit: createMcpAudit(db, nextTick, now),
  }
}

export type GatewayStore = Awaited<ReturnType<typeof openGatewayStore>>
