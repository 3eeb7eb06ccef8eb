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
  /** Codes started from one client key within an hour; 0: no limit. */
  MaxCodesPerClientPerHour: number
  /** Codes started by anyone within an hour; 0: no limit. */
  MaxCodesPerHour: number
}

/** Which budget refused a start: the address's, the client's, or everybody's. */
export type BudgetScope = 'target' | 'client' | 'overall'

/** A start refused by a budget: its scope and the whole seconds until it has room again. */
export interface BudgetRefusal {
  scope: BudgetScope
  retryAfterSeconds: number
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

  type CodesQuery = ReturnType<typeof codesOfTheHour>

  function codesOfTheHour(at: number) {
    return db.selectFrom('login_challenges').where('created', '>', at - HOUR_MS)
  }

  /**
   * undefined while the codes of the hour that `only` selects, the new one (`id`) included, are
   * at most `max`; else when the budget has room for a new code again: once fewer than `max` of
   * the others are younger than an hour (at once when racing starts were refused together).
   */
  async function budgetFreedAt(only: (query: CodesQuery) => CodesQuery, id: number, at: number, max: number) {
    const { count } = await only(codesOfTheHour(at))
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
      .executeTakeFirstOrThrow()
    if (Number(count) <= max) return undefined
    const blocking = await only(codesOfTheHour(at))
      .select('created')
      .where('id', '!=', id)
      .orderBy('created', 'desc')
      .orderBy('id', 'desc')
      .offset(max - 1)
      .limit(1)
      .executeTakeFirst()
    return blocking ? blocking.created + HOUR_MS : at
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
     * Creates a code challenge (and, for email, its magic link) unless a budget of the last hour
     * is spent: MaxChallengesPerTargetPerHour codes to the target (of its kind), then
     * MaxCodesPerClientPerHour codes started from the client key, then MaxCodesPerHour codes in
     * all (every kind, every gateway on this database). The code and link token are returned once.
     * The rows are written first and the hour is counted after (each statement commits on its
     * own), so of concurrent starts, on one gateway or several, the later ones always see the
     * earlier ones and no budget is ever passed; racing starts may at worst all be refused. A
     * refused start leaves no row and tells the whole seconds until the budget has room again.
     */
    async create(input: {
      kind: 'email_otp' | 'phone_otp'
      target: string
      /** The client key the start came from (clientKey of the request's address). */
      client: string
      returnTo: string
      deviceGuid: string
    }): Promise<{ challenge: Challenge; code: string; linkToken: string } | BudgetRefusal> {
      const at = now()
      const code = newCode()
      const id = nextTick()
      const base = { target: input.target, attempts: 0, expires: at + ttlMs, consumed: 0, created: at }
      const rest = { return_to: input.returnTo, client: input.client, device_guid: input.deviceGuid }
      const rows: Challenge[] = [{ id, kind: input.kind, secret_hash: codeHash(id, code), ...base, ...rest }]
      const linkToken = input.kind === 'email_otp' ? newToken() : ''
      if (linkToken)
        rows.push({ id: nextTick(), kind: 'magic_link', secret_hash: hashSecret(linkToken), ...base, ...rest })
      await db.insertInto('login_challenges').values(rows).execute()

      const budgets: [BudgetScope, number, (query: CodesQuery) => CodesQuery][] = [
        [
          'target',
          limits.MaxChallengesPerTargetPerHour,
          (q) => q.where('kind', '=', input.kind).where('target', '=', input.target),
        ],
        [
          'client',
          limits.MaxCodesPerClientPerHour,
          (q) => q.where('client', '=', input.client).where('kind', '!=', 'magic_link'),
        ],
        ['overall', limits.MaxCodesPerHour, (q) => q.where('kind', '!=', 'magic_link')],
      ]
      for (const [scope, max, only] of budgets) {
        if (max === 0) continue
        const freedAt = await budgetFreedAt(only, id, at, max)
        if (freedAt === undefined) continue
        await db
          .deleteFrom('login_challenges')
          .where(
            'id',
            'in',
            rows.map((row) => row.id),
          )
          .execute()
        return { scope, retryAfterSeconds: Math.max(1, Math.ceil((freedAt - at) / 1000)) }
      }
      return { challenge: rows[0]!, code, linkToken }
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
