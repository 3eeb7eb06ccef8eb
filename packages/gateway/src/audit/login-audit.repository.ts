import type { TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { GatewayDatabase, LoginAuditTable } from '../db/schema.ts'

export type LoginAuditRow = LoginAuditTable

/** One sign-in attempt as the flows report it. */
export interface LoginAttempt {
  method: string
  success: boolean
  /** Why it failed, empty on success. */
  reason?: string
  crmId?: number
  appId?: number
  ip: string
  country: string
  userAgent: string
  screen?: string
  deviceGuid?: string
  timezone?: string
  language?: string
}

/** Filters of the audit query; times are epoch milliseconds, `before` is an id cursor. */
export interface LoginAuditFilter {
  crmId?: number
  ip?: string
  /** ISO 3166 code as recorded (upper case). */
  country?: string
  /** Successful attempts only (true) or failed ones only (false). */
  success?: boolean
  from?: number
  to?: number
  before?: number
  limit: number
}

// Bounds per column, so a hostile client cannot fill the log with large values.
const BOUNDS = {
  method: 32,
  reason: 64,
  ip: 64,
  country: 8,
  user_agent: 512,
  screen: 32,
  device_guid: 64,
  timezone: 64,
  language: 35,
}

function bounded(value: string | undefined, max: number): string {
  return (value ?? '').slice(0, max)
}

/** The login audit log (spec: "Platform rules"): every sign-in attempt with where it came from. */
export function createLoginAudit(
  db: Kysely<GatewayDatabase>,
  nextTick: TimetickGenerator,
  now: () => number = Date.now,
) {
  return {
    async record(attempt: LoginAttempt): Promise<LoginAuditRow> {
      const row: LoginAuditRow = {
        id: nextTick(),
        crm_id: attempt.crmId ?? 0,
        app_id: attempt.appId ?? 0,
        method: bounded(attempt.method, BOUNDS.method),
        success: attempt.success ? 1 : 0,
        reason: bounded(attempt.reason, BOUNDS.reason),
        ip: bounded(attempt.ip, BOUNDS.ip),
        country: bounded(attempt.country, BOUNDS.country),
        user_agent: bounded(attempt.userAgent, BOUNDS.user_agent),
        screen: bounded(attempt.screen, BOUNDS.screen),
        device_guid: bounded(attempt.deviceGuid, BOUNDS.device_guid),
        timezone: bounded(attempt.timezone, BOUNDS.timezone),
        language: bounded(attempt.language, BOUNDS.language),
        created: now(),
      }
      await db.insertInto('login_audit').values(row).execute()
      return row
    },

    /** Rows matching the filter, newest first; `from` inclusive, `to` exclusive, ids below `before`. */
    async query(filter: LoginAuditFilter): Promise<LoginAuditRow[]> {
      let query = db.selectFrom('login_audit').selectAll()
      if (filter.crmId !== undefined) query = query.where('crm_id', '=', filter.crmId)
      if (filter.ip !== undefined) query = query.where('ip', '=', filter.ip)
      if (filter.country !== undefined) query = query.where('country', '=', filter.country)
      if (filter.success !== undefined) query = query.where('success', '=', filter.success ? 1 : 0)
      if (filter.from !== undefined) query = query.where('created', '>=', filter.from)
      if (filter.to !== undefined) query = query.where('created', '<', filter.to)
      if (filter.before !== undefined) query = query.where('id', '<', filter.before)
      return query.orderBy('id', 'desc').limit(filter.limit).execute()
    },
  }
}

export type LoginAudit = ReturnType<typeof createLoginAudit>
