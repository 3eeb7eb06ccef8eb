import type { DatabaseDialect, TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import { lockHolder } from '../db/holder-lock.ts'
import type { GatewayDatabase, PushSubscriptionsTable } from '../db/schema.ts'

export type PushSubscription = PushSubscriptionsTable

const SUCCESS_WRITE_MS = 60_000

export interface NewPushSubscription {
  crmId: number
  endpoint: string
  p256dh: string
  auth: string
  userAgent: string
}

/**
 * The browsers' Web Push subscriptions. An endpoint belongs to one browser profile, so it is
 * stored once and belongs to whoever subscribed it last: a browser handed to another user stops
 * receiving the first user's pushes.
 */
export function createPushSubscriptions(
  db: Kysely<GatewayDatabase>,
  dialect: DatabaseDialect,
  nextTick: TimetickGenerator,
  now: () => number = Date.now,
) {
  return {
    /**
     * Stores a subscription (or moves an existing endpoint to this user with fresh keys) and keeps
     * only the user's `maxPerUser` newest. Returns the row and the user the endpoint belonged to
     * before, 0 when it is new.
     */
    async save(
      { crmId, endpoint, p256dh, auth, userAgent }: NewPushSubscription,
      maxPerUser: number,
    ): Promise<{ subscription: PushSubscription; previousOwner: number }> {
      return db.transaction().execute(async (trx) => {
        // Parallel saves of one user take turns (holder-lock.ts), so each trim below sees every
        // other's row and the user never ends above maxPerUser.
        await lockHolder(trx, dialect, `push_subscriptions:${crmId}`)
        const existing = await trx
          .selectFrom('push_subscriptions')
          .select('crm_id')
          .where('endpoint', '=', endpoint)
          .executeTakeFirst()
        const fresh = { crm_id: crmId, p256dh, auth, user_agent: userAgent.slice(0, 512), created: now() }
        const reset = { last_success: 0, failures: 0, last_error: '' }
        // An upsert, since another user may save the same endpoint at the same time (its lock is
        // that user's): the endpoint's unique index makes one row of it, owned by the last writer.
        const subscription = await trx
          .insertInto('push_subscriptions')
          .values({ id: nextTick(), endpoint, ...fresh, ...reset })
          .onConflict((conflict) => conflict.column('endpoint').doUpdateSet({ ...fresh, ...reset }))
          .returningAll()
          .executeTakeFirstOrThrow()
        const surplus = await trx
          .selectFrom('push_subscriptions')
          .select('id')
          .where('crm_id', '=', crmId)
          .orderBy('created', 'desc')
          .orderBy('id', 'desc')
          .offset(maxPerUser)
          .limit(1_000_000)
          .execute()
        if (surplus.length > 0) {
          const ids = surplus.map((row) => row.id)
          // crm_id again: a row another user took meanwhile is rechecked against it and kept.
          await trx.deleteFrom('push_subscriptions').where('id', 'in', ids).where('crm_id', '=', crmId).execute()
        }
        return { subscription, previousOwner: existing?.crm_id ?? 0 }
      })
    },

    /** Removes the user's subscription with this endpoint; false when the user has none with it. */
    async remove(crmId: number, endpoint: string): Promise<boolean> {
      const result = await db
        .deleteFrom('push_subscriptions')
        .where('crm_id', '=', crmId)
        .where('endpoint', '=', endpoint)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },

    /** Removes a subscription the push service reported gone (404/410). */
    async removeGone(id: number): Promise<void> {
      await db.deleteFrom('push_subscriptions').where('id', '=', id).execute()
    },

    /** The user's subscriptions, newest first. */
    async listFor(crmId: number): Promise<PushSubscription[]> {
      return db
        .selectFrom('push_subscriptions')
        .selectAll()
        .where('crm_id', '=', crmId)
        .orderBy('created', 'desc')
        .orderBy('id', 'desc')
        .execute()
    },

    /** A page of every user's subscriptions, newest first (ids below `before`), optionally one user's: the operator panel's list. */
    async page(filter: { crmId?: number; before?: number; limit: number }): Promise<PushSubscription[]> {
      let query = db.selectFrom('push_subscriptions').selectAll()
      if (filter.crmId !== undefined) query = query.where('crm_id', '=', filter.crmId)
      if (filter.before !== undefined) query = query.where('id', '<', filter.before)
      return query.orderBy('id', 'desc').limit(filter.limit).execute()
    },

    /** One subscription by id. */
    async get(id: number): Promise<PushSubscription | undefined> {
      return db.selectFrom('push_subscriptions').selectAll().where('id', '=', id).executeTakeFirst()
    },

    /** True when the user has at least one subscription. */
    async has(crmId: number): Promise<boolean> {
      const row = await db
        .selectFrom('push_subscriptions')
        .select('id')
        .where('crm_id', '=', crmId)
        .limit(1)
        .executeTakeFirst()
      return row !== undefined
    },

    /** The users that have at least one subscription, ascending. */
    async subscribedUsers(): Promise<number[]> {
      const rows = await db.selectFrom('push_subscriptions').select('crm_id').distinct().orderBy('crm_id').execute()
      return rows.map((row) => row.crm_id)
    },

    /**
     * Notes that the push service accepted a push. A healthy subscription is written at most once a
     * minute, so busy users do not cost a database write per push.
     */
    async recordSuccess(subscription: PushSubscription): Promise<void> {
      const at = now()
      if (subscription.failures === 0 && at - subscription.last_success < SUCCESS_WRITE_MS) return
      await db
        .updateTable('push_subscriptions')
        .set({ last_success: at, failures: 0, last_error: '' })
        .where('id', '=', subscription.id)
        .execute()
    },

    /** Notes a push that failed for good (after its last attempt, or refused outright). */
    async recordFailure(id: number, error: string): Promise<void> {
      await db
        .updateTable('push_subscriptions')
        .set((eb) => ({ failures: eb('failures', '+', 1), last_error: error.slice(0, 500) }))
        .where('id', '=', id)
        .execute()
    },
  }
}

export type PushSubscriptions = ReturnType<typeof createPushSubscriptions>
