import type { Kysely, Selectable } from 'kysely'
import type { AdminActionsTable, ChatDatabase } from '../db/schema.ts'

export type AdminActionRow = Selectable<AdminActionsTable>

/** The actions the operator pages offer, as the audit names them. */
export type AdminActionName =
  | 'archive_chat'
  | 'unarchive_chat'
  | 'remove_member'
  | 'delete_message'
  | 'take_escalation'
  | 'create_widget'
  | 'edit_widget'
  | 'delete_widget'

/**
 * The audit of operator actions (table admin_actions, migration 0018): every action on the
 * /ChatAdmin/ pages is recorded, refused ones too, with who (crm_id), when (at, epoch ms), what
 * (action), on what (target, e.g. `chat:<id>`), anything else (detail) and the outcome (`ok` or
 * the reason it was refused). A done action is recorded in the transaction that does it.
 */
export function createAdminActionsRepository(db: Kysely<ChatDatabase>) {
  return {
    async record(row: AdminActionRow): Promise<void> {
      await db.insertInto('admin_actions').values(row).execute()
    },

    /** The newest actions first, older than `before` (a timetick). */
    async recent(before: number, limit: number): Promise<AdminActionRow[]> {
      return db
        .selectFrom('admin_actions')
        .selectAll()
        .where('timetick', '<', before)
        .orderBy('timetick', 'desc')
        .limit(limit)
        .execute()
    },
  }
}

export type AdminActionsRepository = ReturnType<typeof createAdminActionsRepository>
