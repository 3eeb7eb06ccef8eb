import { createHmac, randomInt, timingSafeEqual } from 'node:crypto'
import type { TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { GatewayDatabase, LoginChallengesTable } from '../db/schema.ts'
import { hashSecret, newToken } from './caller.ts'

export type Challenge = LoginChallengesTable

/** What a challenge proves: a code sent by email or SMS, or the link sent with an email code. */
export type ChallengeKind = 'email_otp' | 'phone_otp' | 'magic_link'

export interface ChallengeLimits {
  CodeTtlSeconds: number
  MaxAttempts: number
  MaxChallengesPerTargetPerHour: number
}

const HOUR_MS = 3_600_000

/** The outcome of presenting a code. */
export type CodeCheck =
  | { ok: true; challenge: Challenge }
  | { ok: false; reason: 'expired' | 'wrong_code' | 'attempts_exhausted'; challenge?: Challenge }

/** A new six-digit code, uniformly drawn. */
export function newCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0')
}

/**
 * Sign-in challenges (login_challenges): a code (`email_otp`, `phone_otp`) or a magic link, single
 * use, valid until exactly created + CodeTtlSeconds, with at most MaxAttempts wrong codes. Codes
 * are stored as an HMAC keyed with a secret of this deployment (six digits hashed plainly could be
 * reversed from a leaked row); links as a SHA-256 of their random token.
 */
export function createChallenges(
  db: Kysely<GatewayDatabase>,
  nextTick: TimetickGenerator,
  limits: ChallengeLimits,
  /** codeKey: a secret of this deployment (ServiceSecret); the code HMAC key is derived from it. */
  { codeKey, now = Date.now }: { codeKey: string; now?: () => number },
) {
  const ttlMs = limits.CodeTtlSeconds * 1000
  const key = createHmac('sha256', codeKey).update('atrium sign-in codes').digest()

  function codeHash(id: number, code: string): string {
    return createHmac('sha256', key).update(`${id}:${code}`).digest('hex')
  }

  /** Consumes every open challenge of the target, so a code and its link die together. */
  async function consumeTarget(target: string, kinds: ChallengeKind[]) {
    await db
      .updateTable('login_challenges')
      .set({ consumed: 1 })
      .where('target', '=', target)
      .where('kind', 'in', kinds)
      .where('consumed', '=', 0)
      .execute()
  }

  return {
    ttlMs,

    /**
     * Creates a code challenge (and, for email, its magic link) unless MaxChallengesPerTargetPerHour
     * codes of the kind went to the target in the last hour; the code and link token are returned
     * once. The rows are written first and the hour is counted after (each statement commits on
     * its own), so of concurrent starts the later ones always see the earlier ones and the limit is
     * never passed; racing starts may at worst all be refused. A refused start leaves no row and
     * tells the whole seconds until the oldest code of the hour ages out.
     */
    async create(input: {
      kind: 'email_otp' | 'phone_otp'
      target: string
      returnTo: string
      deviceGuid: string
    }): Promise<{ challenge: Challenge; code: string; linkToken: string } | { retryAfterSeconds: number }> {
      const at = now()
      const code = newCode()
      const id = nextTick()
      const base = { target: input.target, attempts: 0, expires: at + ttlMs, consumed: 0, created: at }
      const rest = { return_to: input.returnTo, device_guid: input.deviceGuid }
      const rows: Challenge[] = [{ id, kind: input.kind, secret_hash: codeHash(id, code), ...base, ...rest }]
      const linkToken = input.kind === 'email_otp' ? newToken() : ''
      if (linkToken)
        rows.push({ id: nextTick(), kind: 'magic_link', secret_hash: hashSecret(linkToken), ...base, ...rest })
      await db.insertInto('login_challenges').values(rows).execute()

      const sent = await db
        .selectFrom('login_challenges')
        .select(['id', 'created'])
        .where('kind', '=', input.kind)
        .where('target', '=', input.target)
        .where('created', '>', at - HOUR_MS)
        .orderBy('created')
        .orderBy('id')
        .execute()
      const max = limits.MaxChallengesPerTargetPerHour
      if (sent.length <= max) return { challenge: rows[0]!, code, linkToken }

      const ids = rows.map((row) => row.id)
      await db.deleteFrom('login_challenges').where('id', 'in', ids).execute()
      const others = sent.filter((row) => row.id !== id)
      // A new code may go once fewer than `max` of the others are younger than an hour (at once
      // when racing starts were refused together).
      const blocking = others[others.length - max]
      const freedAt = blocking ? blocking.created + HOUR_MS : at
      return { retryAfterSeconds: Math.max(1, Math.ceil((freedAt - at) / 1000)) }
    },

    /** Removes a challenge and its link (when its code could not be delivered). */
    async discard(challenge: Challenge): Promise<void> {
      await db
        .deleteFrom('login_challenges')
        .where('target', '=', challenge.target)
        .where('created', '=', challenge.created)
        .where('kind', 'in', [challenge.kind, 'magic_link'])
        .execute()
    },

    /**
     * Checks a code. An attempt is reserved atomically before comparing, so concurrent guesses
     * never exceed MaxAttempts; the guess that reaches the limit ends the challenge and its magic
     * link (rows of one start share target and creation time). A right code
     * consumes the challenge and every other open challenge of its target (its magic link too).
     */
    async checkCode(id: number, kinds: ChallengeKind[], code: string): Promise<CodeCheck> {
      const at = now()
      // RETURNING gives the count as of this attempt, whatever concurrent guesses do meanwhile.
      const challenge = await db
        .updateTable('login_challenges')
        .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
        .where('id', '=', id)
        .where('kind', 'in', kinds)
        .where('consumed', '=', 0)
        .where('expires', '>', at)
        .where('attempts', '<', limits.MaxAttempts)
        .returningAll()
        .executeTakeFirst()
      if (!challenge) {
        const seen = await db
          .selectFrom('login_challenges')
          .selectAll()
          .where('id', '=', id)
          .where('kind', 'in', kinds)
          .executeTakeFirst()
        return { ok: false, reason: 'expired', challenge: seen }
      }
      const presented = Buffer.from(codeHash(id, code), 'hex')
      const right = timingSafeEqual(presented, Buffer.from(challenge.secret_hash, 'hex'))
      if (!right) {
        if (challenge.attempts < limits.MaxAttempts) return { ok: false, reason: 'wrong_code', challenge }
        // A challenge ended by wrong codes is dead, its magic link included (issue 14, item 9):
        // someone guessing the code must not leave the link working for whoever holds the mail.
        await db
          .updateTable('login_challenges')
          .set({ consumed: 1 })
          .where('target', '=', challenge.target)
          .where('created', '=', challenge.created)
          .where('kind', 'in', [challenge.kind, 'magic_link'])
          .execute()
        return { ok: false, reason: 'attempts_exhausted', challenge }
      }
      const used = await db
        .updateTable('login_challenges')
        .set({ consumed: 1 })
        .where('id', '=', id)
        .where('consumed', '=', 0)
        .executeTakeFirst()
      if (used.numUpdatedRows === 0n) return { ok: false, reason: 'expired', challenge }
      await consumeTarget(challenge.target, [challenge.kind as ChallengeKind, 'magic_link'])
      return { ok: true, challenge }
    },

    /** Consumes a magic link by its token: single use, refused from its expiry on; undefined when not usable. */
    async useLink(token: string): Promise<Challenge | undefined> {
      if (token.length < 20 || token.length > 128) return undefined
      const hash = hashSecret(token)
      const challenge = await db
        .selectFrom('login_challenges')
        .selectAll()
        .where('secret_hash', '=', hash)
        .where('kind', '=', 'magic_link')
        .executeTakeFirst()
      if (!challenge) return undefined
      const used = await db
        .updateTable('login_challenges')
        .set({ consumed: 1 })
        .where('id', '=', challenge.id)
        .where('consumed', '=', 0)
        .where('expires', '>', now())
        .executeTakeFirst()
      if (used.numUpdatedRows === 0n) return undefined
      await consumeTarget(challenge.target, ['email_otp'])
      return challenge
    },

    /**
     * Deletes challenges that are expired and older than an hour (younger ones still count
     * toward MaxChallengesPerTargetPerHour); returns how many. Run periodically.
     */
    async sweep(): Promise<number> {
      const at = now()
      const result = await db
        .deleteFrom('login_challenges')
        .where('expires', '<=', at)
        .where('created', '<=', at - HOUR_MS)
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}

export type Challenges = ReturnType<typeof createChallenges>
