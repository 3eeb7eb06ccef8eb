import type { TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { GatewayDatabase, StunReportsTable } from '../db/schema.ts'

export type StunReportRow = StunReportsTable

export interface StunReportLimits {
  /** Reports kept per user; older ones go when a new one arrives. */
  perUser: number
  /** Reports older than this (ms) go when any report arrives. */
  retentionMs: number
}

/**
 * Clients' reports of their ICE gathering, in the gateway database so that every gateway on a
 * shared database (and the StunMonitor page) sees them. Bounded on every write: per user and by age.
 */
export function createStunReports(
  db: Kysely<GatewayDatabase>,
  nextTick: TimetickGenerator,
  now: () => number,
  limits: StunReportLimits,
) {
  return {
    /** Stores a report and removes the user's reports beyond the limit and everyone's expired ones. */
    async add(input: { crmId: number; ip: string; userAgent: string; report: string }): Promise<StunReportRow> {
      const row: StunReportRow = {
        id: nextTick(),
        crm_id: input.crmId,
        ip: input.ip,
        user_agent: input.userAgent,
        report: input.report,
        created: now(),
      }
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('stun_reports').values(row).execute()
        const oldestKept = await trx
          .selectFrom('stun_reports')
          .select('id')
          .where('crm_id', '=', input.crmId)
          .orderBy('id', 'desc')
          .offset(limits.perUser - 1)
          .limit(1)
          .executeTakeFirst()
        if (oldestKept) {
          await trx
            .deleteFrom('stun_reports')
            .where('crm_id', '=', input.crmId)
            .where('id', '<', oldestKept.id)
            .execute()
        }
        await trx
          .deleteFrom('stun_reports')
          .where('created', '<', row.created - limits.retentionMs)
          .execute()
      })
      return row
    },

    /** A page of every user's reports, newest first (ids below `before`), optionally one user's: the STUN monitor's list. */
    async page(filter: { crmId?: number; before?: number; limit: number }): Promise<StunReportRow[]> {
      let query = db.selectFrom('stun_reports').selectAll()
      if (filter.crmId !== undefined) query = query.where('crm_id', '=', filter.crmId)
      if (filter.before !== undefined) query = query.where('id', '<', filter.before)
      return query.orderBy('id', 'desc').limit(filter.limit).execute()
    },

    /** The user's newest report, if any is kept. */
    async latest(crmId: number): Promise<StunReportRow | undefined> {
      return db
        .selectFrom('stun_reports')
        .selectAll()
        .where('crm_id', '=', crmId)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst()
    },
  }
}

export type StunReports = ReturnType<typeof createStunReports>
