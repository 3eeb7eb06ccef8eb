import type { TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { GatewayDatabase, WebauthnChallengesTable, WebauthnCredentialsTable } from '../db/schema.ts'

export type WebauthnCredential = WebauthnCredentialsTable
export type WebauthnChallenge = WebauthnChallengesTable
export type CredentialKind = 'passkey' | 'security_key'

/** How long a registration or sign-in ceremony may take (also the browser's timeout). */
export const CEREMONY_TTL_MS = 5 * 60_000
/** Passkeys and security keys one user may register. */
export const MAX_CREDENTIALS_PER_USER = 20

/** Registered WebAuthn credentials and the challenges of their ceremonies. */
export function createPasskeys(db: Kysely<GatewayDatabase>, nextTick: TimetickGenerator, now: () => number = Date.now) {
  return {
    /** Stores a new credential; undefined when its credential id is registered already. */
    async add(
      input: Omit<WebauthnCredential, 'id' | 'created' | 'last_used'>,
    ): Promise<WebauthnCredential | undefined> {
      const row: WebauthnCredential = { ...input, id: nextTick(), created: now(), last_used: 0 }
      const result = await db
        .insertInto('webauthn_credentials')
        .values(row)
        .onConflict((conflict) => conflict.column('credential_id').doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1 ? row : undefined
    },

    async list(crmId: number): Promise<WebauthnCredential[]> {
      return db
        .selectFrom('webauthn_credentials')
        .selectAll()
        .where('crm_id', '=', crmId)
        .orderBy('id', 'desc')
        .execute()
    },

    async count(crmId: number): Promise<number> {
      const row = await db
        .selectFrom('webauthn_credentials')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('crm_id', '=', crmId)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },

    async byCredentialId(credentialId: string): Promise<WebauthnCredential | undefined> {
      return db
        .selectFrom('webauthn_credentials')
        .selectAll()
        .where('credential_id', '=', credentialId)
        .executeTakeFirst()
    },

    async rename(crmId: number, id: number, name: string): Promise<WebauthnCredential | undefined> {
      await db
        .updateTable('webauthn_credentials')
        .set({ name })
        .where('id', '=', id)
        .where('crm_id', '=', crmId)
        .execute()
      return db
        .selectFrom('webauthn_credentials')
        .selectAll()
        .where('id', '=', id)
        .where('crm_id', '=', crmId)
        .executeTakeFirst()
    },

    async remove(crmId: number, id: number): Promise<boolean> {
      const result = await db
        .deleteFrom('webauthn_credentials')
        .where('id', '=', id)
        .where('crm_id', '=', crmId)
        .executeTakeFirst()
      return Number(result.numDeletedRows) === 1
    },

    /**
     * Records a sign-in: the new counter, the backup state, the time. Guarded by the counter read
     * before, so of two sign-ins racing with one assertion only the first moves it.
     */
    async used(credential: WebauthnCredential, counter: number, backedUp: boolean): Promise<boolean> {
      const result = await db
        .updateTable('webauthn_credentials')
        .set({ counter, backed_up: backedUp ? 1 : 0, last_used: now() })
        .where('id', '=', credential.id)
        .where('counter', '=', credential.counter)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /** A new challenge, and the removal of those long expired. */
    async createChallenge(input: Pick<WebauthnChallenge, 'crm_id' | 'purpose' | 'kind' | 'challenge'>) {
      const at = now()
      await db
        .deleteFrom('webauthn_challenges')
        .where('expires', '<', at - CEREMONY_TTL_MS)
        .execute()
      const row: WebauthnChallenge = { ...input, id: nextTick(), expires: at + CEREMONY_TTL_MS, consumed: 0 }
      await db.insertInto('webauthn_challenges').values(row).execute()
      return row
    },

    /**
     * Uses up a live challenge of `purpose` (of a registration: of user `crmId` only, so nobody
     * spoils another's); exactly one of concurrent callers gets it.
     */
    async consumeChallenge(id: number, purpose: 'register' | 'authenticate', crmId?: number) {
      let update = db
        .updateTable('webauthn_challenges')
        .set({ consumed: 1 })
        .where('id', '=', id)
        .where('purpose', '=', purpose)
      if (crmId !== undefined) update = update.where('crm_id', '=', crmId)
      const used = await update.where('consumed', '=', 0).where('expires', '>', now()).executeTakeFirst()
      if (Number(used.numUpdatedRows) !== 1) return undefined
      return db.selectFrom('webauthn_challenges').selectAll().where('id', '=', id).executeTakeFirst()
    },
  }
}

export type Passkeys = ReturnType<typeof createPasskeys>
