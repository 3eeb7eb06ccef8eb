import type { Kysely } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'

/** One operator action to record: who did what to which target, and how it ended. */
export interface WidgetAction {
  crmId: number
  /** e.g. `widget.create`, `widget.edit`, `widget.delete`. */
  action: string
  /** The widget's name. */
  target: string
  /** What was asked, e.g. the title, scope and interval given. */
  detail: string
  /** `ok`, or `refused: <error name>`. */
  outcome: string
}

/** Records operator actions on Telegram widgets in admin_actions, the chat module's operator audit log. */
export function createWidgetActions(db: Kysely<ChatDatabase>, nextTick: () => number, now: () => number) {
  return {
    async record(action: WidgetAction): Promise<void> {
      await db
        .insertInto('admin_actions')
        .values({
          id: nextTick(),
          crm_id: action.crmId,
          action: action.action,
          target: action.target,
          detail: action.detail,
          at: now(),
          outcome: action.outcome,
        })
        .execute()
    },
  }
}

export type WidgetActions = ReturnType<typeof createWidgetActions>
