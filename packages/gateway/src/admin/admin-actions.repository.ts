import type { TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { AdminActionsTable, GatewayDatabase } from '../db/schema.ts'

export type AdminAction = AdminActionsTable

export interface NewAdminAction {
  crmId: number
  action: string
  target: string
  detail?: string
  outcome: string
}

/** Longest kept text per column, so a long form field cannot bloat the log. */
const MAX_TEXT = 512

/** The log of operator actions in /ProxyAdmin/ (table `admin_actions`), newest first. */
export function createAdminActions(
  db: Kysely<GatewayDatabase>,
  nextTick: TimetickGenerator,
  now: () => number = Date.now,
) {
  return {
    async record(entry: NewAdminAction): Promise<AdminAction> {
      const row: AdminAction = {
        id: nextTick(),
        crm_id: entry.crmId,
        action: entry.action.slice(0, MAX_TEXT),
        target: entry.target.slice(0, MAX_TEXT),
        detail: (entry.detail ?? '').slice(0, MAX_TEXT),
        outcome: entry.outcome.slice(0, MAX_TEXT),
        at: now(),
      }
      await db.insertInto('admin_actions').values(row).execute()
      return row
    },

    /** A page of actions, newest first: ids below `before`, optionally by one operator. */
    async page(filter: { crmId?: number; before?: number; limit: number }): Promise<AdminAction[]> {
      let query = db.selectFrom('admin_actions').selectAll()
      if (filter.crmId !== undefined) query = query.where('crm_id', '=', filter.crmId)
      if (filter.before !== undefined) query = query.where('id', '<', filter.before)
      return query.orderBy('id', 'desc').limit(filter.limit).execute()
    },
  }
}

export type AdminActions = ReturnType<typeof createAdminActions>
