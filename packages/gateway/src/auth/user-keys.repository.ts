import type { TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { GatewayDatabase, UserKeyChallengesTable, UserKeysTable } from '../db/schema.ts'

export type UserKey = UserKeysTable
export type UserKeyChallenge = UserKeyChallengesTable

/** How long a challenge may be answered. */
export const CHALLENGE_TTL_MS = 60_000
/** Keys one user may register. */
export const MAX_KEYS_PER_USER = 20

/** Registered Ed25519 keys and their single-use sign-in challenges. */
export function createUserKeys(db: Kysely<GatewayDatabase>, nextTick: TimetickGenerator, now: () => number = Date.now) {
  return {
    /** Registers a key; undefined when the key is registered already (to anyone: a key belongs to one user). */
    async add(input: { crmId: number; name: string; publicKey: string }): Promise<UserKey | undefined> {
      const row: UserKey = {
        id: nextTick(),
        crm_id: input.crmId,
        name: input.name,
        public_key: input.publicKey,
        created: now(),
        last_used: 0,
      }
      const result = await db
        .insertInto('user_keys')
        .values(row)
        .onConflict((conflict) => conflict.column('public_key').doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1 ? row : undefined
    },

    async count(crmId: number): Promise<number> {
      const row = await db
        .selectFrom('user_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('crm_id', '=', crmId)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },

    async list(crmId: number): Promise<UserKey[]> {
      return db.selectFrom('user_keys').selectAll().where('crm_id', '=', crmId).orderBy('id', 'desc').execute()
    },

    /** Removes one of the user's keys; false when they have no such key. */
    async remove(crmId: number, id: number): Promise<boolean> {
      const result = await db
        .deleteFrom('user_keys')
        .where('id', '=', id)
        .where('crm_id', '=', crmId)
        .executeTakeFirst()
      return Number(result.numDeletedRows) === 1
    },

    async byPublicKey(publicKey: string): Promise<UserKey | undefined> {
      return db.selectFrom('user_keys').selectAll().where('public_key', '=', publicKey).executeTakeFirst()
    },

    async byId(id: number): Promise<UserKey | undefined> {
      return db.selectFrom('user_keys').selectAll().where('id', '=', id).executeTakeFirst()
    },

    async markUsed(id: number): Promise<void> {
      await db.updateTable('user_keys').set({ last_used: now() }).where('id', '=', id).execute()
    },

    /** A new challenge for `keyId` (0: an unknown key), and the removal of those expired a while ago. */
    async createChallenge(keyId: number, nonceHash: string): Promise<UserKeyChallenge> {
      const at = now()
      await db
        .deleteFrom('user_key_challenges')
        .where('expires', '<', at - CHALLENGE_TTL_MS)
        .execute()
      const row: UserKeyChallenge = {
        id: nextTick(),
        key_id: keyId,
        nonce_hash: nonceHash,
        expires: at + CHALLENGE_TTL_MS,
        consumed: 0,
      }
      await db.insertInto('user_key_challenges').values(row).execute()
      return row
    },

    /**
     * Uses up a live challenge issued as `issued` said (its nonce hashing to `nonceHash`, its
     * expiry): of concurrent answers exactly one gets the row; later ones, answers after the expiry
     * and answers with another nonce or expiry (someone who guessed the id cannot burn it) get
     * undefined. An answer with the right text uses it up, whether its signature is right or wrong.
     */
    async consumeChallenge(issued: { id: number; nonceHash: string; expires: number }) {
      const at = now()
      const used = await db
        .updateTable('user_key_challenges')
        .set({ consumed: 1 })
        .where('id', '=', issued.id)
        .where('nonce_hash', '=', issued.nonceHash)
        .where('expires', '=', issued.expires)
        .where('consumed', '=', 0)
        .where('expires', '>', at)
        .executeTakeFirst()
      if (Number(used.numUpdatedRows) !== 1) return undefined
      return db.selectFrom('user_key_challenges').selectAll().where('id', '=', issued.id).executeTakeFirst()
    },
  }
}

export type UserKeys = ReturnType<typeof createUserKeys>
