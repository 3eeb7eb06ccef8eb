import type { TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type {
  FederatedFlowsTable,
  FederatedIdentitiesTable,
  FederationPartnersTable,
  GatewayDatabase,
} from '../db/schema.ts'
import type { User } from '../users/users.repository.ts'

export type FederatedIdentity = FederatedIdentitiesTable
export type FederationPartner = FederationPartnersTable
export type FederatedFlow = FederatedFlowsTable

/**
 * The identities users sign in with at providers, the partners added at run time and the flows
 * under way (docs/gateway.md, "OAuth and federated sign-in").
 */
export function createFederation(
  db: Kysely<GatewayDatabase>,
  nextTick: TimetickGenerator,
  now: () => number = Date.now,
) {
  async function identity(provider: string, subject: string): Promise<FederatedIdentity | undefined> {
    return db
      .selectFrom('federated_identities')
      .selectAll()
      .where('provider', '=', provider)
      .where('subject', '=', subject)
      .executeTakeFirst()
  }

  return {
    identity,

    async identitiesOf(crmId: number): Promise<FederatedIdentity[]> {
      return db.selectFrom('federated_identities').selectAll().where('crm_id', '=', crmId).orderBy('id').execute()
    },

    /** The provider accounts of several users, oldest first. */
    async identitiesOfUsers(crmIds: number[]): Promise<FederatedIdentity[]> {
      if (crmIds.length === 0) return []
      return db.selectFrom('federated_identities').selectAll().where('crm_id', 'in', crmIds).orderBy('id').execute()
    },

    /** Unlinks one of the user's provider accounts; false when they have no such link. */
    async unlink(crmId: number, id: number): Promise<boolean> {
      const result = await db
        .deleteFrom('federated_identities')
        .where('id', '=', id)
        .where('crm_id', '=', crmId)
        .executeTakeFirst()
      return Number(result.numDeletedRows) === 1
    },

    /**
     * Links (provider, subject) to `crmId` unless it is linked already; answers the owner either
     * way. The unique index makes the first of concurrent links win; the others get its owner.
     */
    async link(input: { crmId: number; provider: string; subject: string; email: string }): Promise<number> {
      const at = now()
      await db
        .insertInto('federated_identities')
        .values({
          id: nextTick(),
          crm_id: input.crmId,
          provider: input.provider,
          subject: input.subject,
          email: input.email,
          created: at,
          last_used: at,
        })
        .onConflict((conflict) => conflict.columns(['provider', 'subject']).doNothing())
        .execute()
      const row = await identity(input.provider, input.subject)
      if (!row) throw new Error('federated identity vanished after its insert')
      return row.crm_id
    },

    /**
     * A new user owning only (provider, subject), made in one transaction; when a concurrent
     * sign-in linked the subject first, its owner instead (the user made here is rolled back).
     */
    async createUserWith(provider: string, subject: string): Promise<number> {
      try {
        return await db.transaction().execute(async (trx) => {
          const at = now()
          const user: User = { crm_id: nextTick(), name: '', scopes: '', created: at, timetick_update: nextTick() }
          await trx.insertInto('users').values(user).execute()
          await trx
            .insertInto('federated_identities')
            .values({ id: nextTick(), crm_id: user.crm_id, provider, subject, email: '', created: at, last_used: at })
            .execute()
          return user.crm_id
        })
      } catch (error) {
        const row = await identity(provider, subject)
        if (row) return row.crm_id
        throw error
      }
    },

    async markUsed(id: number): Promise<void> {
      await db.updateTable('federated_identities').set({ last_used: now() }).where('id', '=', id).execute()
    },

    partners: {
      /** A page of partners, newest first, older than the id `before` when given (the operator panel). */
      async page({ before, limit }: { before?: number; limit: number }): Promise<FederationPartner[]> {
        let query = db.selectFrom('federation_partners').selectAll()
        if (before !== undefined) query = query.where('id', '<', before)
        return query.orderBy('id', 'desc').limit(limit).execute()
      },

      async list(): Promise<FederationPartner[]> {
        return db.selectFrom('federation_partners').selectAll().orderBy('id').execute()
      },

      async bySlug(slug: string): Promise<FederationPartner | undefined> {
        return db.selectFrom('federation_partners').selectAll().where('slug', '=', slug).executeTakeFirst()
      },

      /** Adds a partner; undefined when its slug is taken. */
      async add(input: Omit<FederationPartner, 'id' | 'created'>): Promise<FederationPartner | undefined> {
        const row: FederationPartner = { ...input, id: nextTick(), created: now() }
        const result = await db
          .insertInto('federation_partners')
          .values(row)
          .onConflict((conflict) => conflict.column('slug').doNothing())
          .executeTakeFirst()
        return Number(result.numInsertedOrUpdatedRows ?? 0) === 1 ? row : undefined
      },

      /** Replaces the scopes a partner is asked for (space-separated); false when there is no such partner. */
      async setScopes(slug: string, scopes: string): Promise<boolean> {
        const result = await db
          .updateTable('federation_partners')
          .set({ scopes })
          .where('slug', '=', slug)
          .executeTakeFirst()
        return Number(result.numUpdatedRows) === 1
      },

      async remove(slug: string): Promise<boolean> {
        const result = await db.deleteFrom('federation_partners').where('slug', '=', slug).executeTakeFirst()
        return Number(result.numDeletedRows) === 1
      },
    },

    flows: {
      /** Records a started flow; flows expired an hour ago are removed on the way. */
      async create(input: Omit<FederatedFlow, 'id' | 'consumed'>): Promise<void> {
        await db
          .deleteFrom('federated_flows')
          .where('expires', '<', now() - 3_600_000)
          .execute()
        await db
          .insertInto('federated_flows')
          .values({ ...input, id: nextTick(), consumed: 0 })
          .execute()
      },

      /** Uses up the live flow with this state hash: of concurrent returns exactly one gets it. */
      async consume(stateHash: string): Promise<FederatedFlow | undefined> {
        const used = await db
          .updateTable('federated_flows')
          .set({ consumed: 1 })
          .where('state_hash', '=', stateHash)
          .where('consumed', '=', 0)
          .where('expires', '>', now())
          .executeTakeFirst()
        if (Number(used.numUpdatedRows) !== 1) return undefined
        return db.selectFrom('federated_flows').selectAll().where('state_hash', '=', stateHash).executeTakeFirst()
      },
    },
  }
}

export type Federation = ReturnType<typeof createFederation>
