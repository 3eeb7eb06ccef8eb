import type { Kysely } from 'kysely'
import type { GatewayDatabase } from '../db/schema.ts'

/** The events poller's position in each module's feed, kept across restarts. */
export function createEventCursors(db: Kysely<GatewayDatabase>, now: () => number = Date.now) {
  return {
    /** The saved cursor of a module and when it was saved; undefined when the module was never polled. */
    async get(module: string): Promise<{ tick: number; updated: number } | undefined> {
      return db.selectFrom('event_cursors').select(['tick', 'updated']).where('module', '=', module).executeTakeFirst()
    },

    async save(module: string, tick: number): Promise<void> {
      const updated = now()
      await db
        .insertInto('event_cursors')
        .values({ module, tick, updated })
        .onConflict((conflict) => conflict.column('module').doUpdateSet({ tick, updated }))
        .execute()
    },
  }
}

export type EventCursors = ReturnType<typeof createEventCursors>
