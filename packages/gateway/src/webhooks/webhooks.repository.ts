import type { TimetickGenerator, WebhookEvent } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { GatewayDatabase, WebhookDeliveriesTable } from '../db/schema.ts'

export type WebhookDelivery = WebhookDeliveriesTable

/** How a failed attempt is recorded: retried at `nextAttempt`, or dead when `dead`. */
export interface AttemptFailure {
  attempts: number
  nextAttempt: number
  status: number
  error: string
  dead: boolean
}

/**
 * Webhook cursors and deliveries. A lane (one app, one module) reads the module's feed from its
 * cursor; what it reads becomes a pending delivery in the same transaction that moves the cursor
 * past it, so every event is either still ahead of the cursor or held in a delivery row.
 */
export function createWebhooks(db: Kysely<GatewayDatabase>, nextTick: TimetickGenerator, now: () => number = Date.now) {
  function saveCursorIn(trx: Kysely<GatewayDatabase>, appId: number, module: string, tick: number) {
    const updated = now()
    return trx
      .insertInto('webhook_cursors')
      .values({ app_id: appId, module, tick, updated })
      .onConflict((conflict) => conflict.columns(['app_id', 'module']).doUpdateSet({ tick, updated }))
      .execute()
  }

  return {
    /** The lane's saved cursor; undefined when the app never read this module. */
    async cursor(appId: number, module: string): Promise<number | undefined> {
      const row = await db
        .selectFrom('webhook_cursors')
        .select('tick')
        .where('app_id', '=', appId)
        .where('module', '=', module)
        .executeTakeFirst()
      return row?.tick
    },

    async saveCursor(appId: number, module: string, tick: number): Promise<void> {
      await saveCursorIn(db, appId, module, tick)
    },

    /** Records events of the lane as one pending delivery and moves the cursor to `cursor`, atomically. */
    async enqueue(appId: number, module: string, events: WebhookEvent[], cursor: number): Promise<WebhookDelivery> {
      const at = now()
      const delivery: WebhookDelivery = {
        id: nextTick(),
        app_id: appId,
        module,
        first_tick: events[0]!.tick,
        last_tick: events.at(-1)!.tick,
        event_count: events.length,
        body: JSON.stringify({ events }),
        state: 'pending',
        attempts: 0,
        next_attempt: at,
        last_status: 0,
        last_error: '',
        created: at,
        updated: at,
      }
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('webhook_deliveries').values(delivery).execute()
        await saveCursorIn(trx, appId, module, cursor)
      })
      return delivery
    },

    /** The lane's oldest pending delivery, to be finished before anything newer is read. */
    async nextPending(appId: number, module: string): Promise<WebhookDelivery | undefined> {
      return db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('app_id', '=', appId)
        .where('module', '=', module)
        .where('state', '=', 'pending')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst()
    },

    async get(id: number): Promise<WebhookDelivery | undefined> {
      return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst()
    },

    /** A delivered row is removed: its receiver has it. */
    async delivered(id: number): Promise<void> {
      await db.deleteFrom('webhook_deliveries').where('id', '=', id).execute()
    },

    async failed(id: number, failure: AttemptFailure): Promise<void> {
      await db
        .updateTable('webhook_deliveries')
        .set({
          attempts: failure.attempts,
          next_attempt: failure.nextAttempt,
          last_status: failure.status,
          last_error: failure.error.slice(0, 500),
          state: failure.dead ? 'dead' : 'pending',
          updated: now(),
        })
        .where('id', '=', id)
        .execute()
    },

    /** Deliveries waiting to be attempted and dead ones, over every app and module. */
    async countByState(): Promise<{ pending: number; dead: number }> {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select(['state', (eb) => eb.fn.countAll<number>().as('count')])
        .groupBy('state')
        .execute()
      const counts = { pending: 0, dead: 0 }
      for (const row of rows) if (row.state === 'pending' || row.state === 'dead') counts[row.state] = Number(row.count)
      return counts
    },

    /** Dead letters, oldest first, optionally of one app. */
    async deadLetters({ appId, limit }: { appId?: number; limit: number }): Promise<WebhookDelivery[]> {
      let query = db.selectFrom('webhook_deliveries').selectAll().where('state', '=', 'dead')
      if (appId !== undefined) query = query.where('app_id', '=', appId)
      return query.orderBy('id').limit(limit).execute()
    },
  }
}

export type Webhooks = ReturnType<typeof createWebhooks>
