import type { DatabaseDialect } from '@atrium/platform'
import type { Kysely } from 'kysely'
import { hashSecret, newToken } from '../auth/caller.ts'
import { lockHolder } from '../db/holder-lock.ts'
import type { GatewayDatabase, SessionsTable } from '../db/schema.ts'
import { createInvalidations, type Invalidations } from '../server/invalidations.ts'

export interface SessionLimits {
  /** A session unused for this long is expired: at exactly last use + IdleSeconds it is refused. */
  IdleSeconds: number
  /** A session older than this is expired, however active: at exactly created + AbsoluteSeconds it is refused. */
  AbsoluteSeconds: number
  /** Sessions one user (or one app, through AppLogin) may hold; signing in once more ends the oldest. */
  MaxPerUser: number
}

export type Session = SessionsTable

export interface NewSession {
  crmId: number
  appId?: number
  method: string
  ip: string
  userAgent: string
}

/** How long a cached session is trusted before it is read again (another instance may have removed it). */
const CACHE_TRUST_MS = 5_000
const CACHE_MAX_ENTRIES = 100_000

interface Cached {
  session: Session
  readAt: number
  /** last_seen as stored in the database. */
  stored: number
  /** The cookie token the session was last resolved with (kept to forget it with the entry). */
  token: string | undefined
}

/**
 * Sessions of this gateway instance: created at sign-in, resolved on every request from the cookie
 * token, expired exactly at their idle and absolute lifetimes (and deleted when seen expired),
 * capped per user. Resolving is served from memory; the database copy of `last_seen` is written at
 * most once per `touchMs`, so a restart can only make a session expire slightly earlier, never later.
 */
export function createSessions(
  db: Kysely<GatewayDatabase>,
  dialect: DatabaseDialect,
  limits: SessionLimits,
  now: () => number = Date.now,
  invalidations: Invalidations = createInvalidations(),
) {
  const idleMs = limits.IdleSeconds * 1000
  const absoluteMs = limits.AbsoluteSeconds * 1000
  const touchMs = Math.min(60_000, Math.floor(idleMs / 10))
  const cache = new Map<string, Cached>()
  // Cookie token → session id, so a cached session is found without hashing its token again. A
  // token is here only while its session is in `cache` (forget() removes both), so it is trusted
  // no longer than the cache, and revocation applies to it exactly as to the cache.
  const tokenIds = new Map<string, string>()

  function forget(id: string) {
    const entry = cache.get(id)
    if (!entry) return
    if (entry.token !== undefined) tokenIds.delete(entry.token)
    cache.delete(id)
  }

  function remember(session: Session, at: number, token?: string) {
    forget(session.id)
    cache.set(session.id, { session, readAt: at, stored: session.last_seen, token })
    if (token !== undefined) tokenIds.set(token, session.id)
    if (cache.size > CACHE_MAX_ENTRIES) forget(cache.keys().next().value!)
  }

  function expired(session: Session, at: number): boolean {
    return at - session.last_seen >= idleMs || at - session.created >= absoluteMs
  }

  async function deleteIds(ids: string[]) {
    if (ids.length === 0) return
    await db.deleteFrom('sessions').where('id', 'in', ids).execute()
    await invalidations.publish({ kind: 'sessions', ids })
  }

  /** The cached session in use now, or undefined once it expired (deleted), writing its last use when due. */
  function use(id: string, entry: Cached, at: number): Session | undefined | Promise<Session | undefined> {
    const { session } = entry
    if (expired(session, at)) return deleteIds([id]).then(() => undefined)
    session.last_seen = at
    if (at - entry.stored < touchMs) return session
    entry.stored = at
    return db
      .updateTable('sessions')
      .set({ last_seen: at })
      .where('id', '=', id)
      .execute()
      .then(() => session)
  }

  /** Reads the session from the database (not cached, or cached too long), then uses it. */
  async function readAndUse(id: string, token: string, at: number, entry: Cached | undefined) {
    const row = await db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst()
    if (!row) {
      forget(id)
      return undefined
    }
    if (entry) row.last_seen = Math.max(row.last_seen, entry.session.last_seen)
    remember(row, at, token)
    return use(id, cache.get(id)!, at)
  }

  // Sessions ended by this or another worker of the node (server/invalidations.ts).
  invalidations.on((invalidation) => {
    if (invalidation.kind === 'sessions') for (const id of invalidation.ids) forget(id)
  })

  return {
    /** Starts a session and returns its cookie token (shown once) with the stored row. */
    async create({ crmId, appId = 0, method, ip, userAgent }: NewSession) {
      const token = newToken()
      const at = now()
      const session: Session = {
        id: hashSecret(token),
        crm_id: crmId,
        app_id: appId,
        method,
        created: at,
        last_seen: at,
        csrf: newToken(24),
        ip,
        user_agent: userAgent.slice(0, 512),
      }
      const evicted = await db.transaction().execute(async (trx) => {
        // The cap is per holder: a user, or an app signed in with AppLogin. Parallel sign-ins of
        // one holder take turns (holder-lock.ts), so each trim sees every other's session.
        const capped = crmId !== 0 || appId !== 0
        if (capped) await lockHolder(trx, dialect, `sessions:${crmId}:${appId}`)
        await trx.insertInto('sessions').values(session).execute()
        if (!capped) return []
        const rows = await trx
          .selectFrom('sessions')
          .select('id')
          .where('crm_id', '=', crmId)
          .where('app_id', '=', appId)
          .orderBy('created', 'desc')
          .orderBy('id')
          .offset(limits.MaxPerUser)
          .limit(1_000_000)
          .execute()
        const ids = rows.map((row) => row.id)
        if (ids.length > 0) await trx.deleteFrom('sessions').where('id', 'in', ids).execute()
        return ids
      })
      if (evicted.length > 0) await invalidations.publish({ kind: 'sessions', ids: evicted })
      remember(session, at, token)
      return { token, session }
    },

    /**
     * The live session of a cookie token, its last use moved to now; undefined when unknown or
     * expired (then deleted). Answered at once, without a promise, while the cached session is
     * trusted and its last use needs no write: the proxy and static paths then take no microtask.
     */
    resolve(token: string): Session | undefined | Promise<Session | undefined> {
      if (token.length < 20 || token.length > 128) return undefined
      const id = tokenIds.get(token) ?? hashSecret(token)
      const at = now()
      const entry = cache.get(id)
      if (!entry || at - entry.readAt >= CACHE_TRUST_MS) return readAndUse(id, token, at, entry)
      return use(id, entry, at)
    },

    /** Ends one session. */
    async revoke(id: string): Promise<void> {
      await deleteIds([id])
    },

    /** Ends every session of a user; returns how many there were. */
    async revokeAll(crmId: number): Promise<number> {
      const rows = await db.selectFrom('sessions').select('id').where('crm_id', '=', crmId).execute()
      await deleteIds(rows.map((row) => row.id))
      return rows.length
    },

    /** The user's live sessions, newest first (for a "signed-in devices" list). */
    async list(crmId: number): Promise<Session[]> {
      const at = now()
      const rows = await db
        .selectFrom('sessions')
        .selectAll()
        .where('crm_id', '=', crmId)
        .orderBy('created', 'desc')
        .execute()
      // The last use may be newer in memory than in the table.
      return rows
        .map((row) => ({ ...row, last_seen: Math.max(row.last_seen, cache.get(row.id)?.session.last_seen ?? 0) }))
        .filter((row) => !expired(row, at))
    },

    /** Deletes every expired session; returns how many. Run periodically. */
    async sweep(): Promise<number> {
      const at = now()
      const rows = await db
        .selectFrom('sessions')
        .select(['id', 'last_seen'])
        .where((eb) => eb.or([eb('last_seen', '<=', at - idleMs), eb('created', '<=', at - absoluteMs)]))
        .execute()
      // A session used since its stored last_seen is only in memory; keep it.
      const ids = rows
        .filter((row) => !cache.has(row.id) || expired(cache.get(row.id)!.session, at))
        .map((row) => row.id)
      await deleteIds(ids)
      return ids.length
    },
  }
}

export type Sessions = ReturnType<typeof createSessions>
