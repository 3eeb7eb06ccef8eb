import type { TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { ApiKeysTable, GatewayDatabase } from '../db/schema.ts'
import { createInvalidations, type Invalidations } from '../server/invalidations.ts'
import { hashSecret, newToken, secretMatches } from './caller.ts'

export type ApiKey = ApiKeysTable

/** `user` keys act as their user; `service` keys act as their app. */
export type ApiKeyType = 'user' | 'service'

const KEY_PATTERN = /^atr_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/

/** The parts of a well-formed API key (the secret may itself hold `_`); undefined for anything else. */
export function apiKeyParts(key: string): { prefix: string; secret: string } | undefined {
  const match = KEY_PATTERN.exec(key)
  return match ? { prefix: match[1]!, secret: match[2]! } : undefined
}
const PREFIX_ALPHABET = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789'
const CACHE_TRUST_MS = 5_000
const LAST_USED_EVERY_MS = 60_000

function newPrefix(): string {
  const bytes = newToken(24)
  let prefix = ''
  for (const char of bytes) {
    if (PREFIX_ALPHABET.includes(char)) prefix += char
    if (prefix.length === 12) return prefix
  }
  return newPrefix()
}

/**
 * API keys: `atr_<prefix>_<secret>`. The prefix is public (shown in lists and used for lookup);
 * only a hash of the secret is stored and the whole key is shown once, at creation. A revoked key
 * stops working on this instance at once and on others within five seconds.
 */
export function createApiKeys(
  db: Kysely<GatewayDatabase>,
  nextTick: TimetickGenerator,
  now: () => number = Date.now,
  invalidations: Invalidations = createInvalidations(),
) {
  const cache = new Map<string, { key: ApiKey; readAt: number }>()
  // Keys revoked by this or another worker of the node (server/invalidations.ts).
  invalidations.on((invalidation) => {
    if (invalidation.kind !== 'apiKey') return
    for (const [prefix, entry] of cache) if (entry.key.id === invalidation.id) cache.delete(prefix)
  })

  return {
    async create(input: { keyType: ApiKeyType; crmId: number; appId: number; scopes: string[]; name: string }) {
      const prefix = newPrefix()
      const secret = newToken()
      const row: ApiKey = {
        id: nextTick(),
        prefix,
        secret_hash: hashSecret(secret),
        key_type: input.keyType,
        crm_id: input.crmId,
        app_id: input.appId,
        scopes: input.scopes.join(' '),
        name: input.name,
        created: now(),
        last_used: 0,
        revoked: 0,
      }
      await db.insertInto('api_keys').values(row).execute()
      return { key: `atr_${prefix}_${secret}`, row }
    },

    /** The active key matching a presented key string, or undefined. Constant-time on the secret. */
    async verify(presented: string): Promise<ApiKey | undefined> {
      const parts = apiKeyParts(presented)
      if (!parts) return undefined
      const { prefix, secret } = parts
      const at = now()
      let entry = cache.get(prefix)
      if (!entry || at - entry.readAt >= CACHE_TRUST_MS) {
        const key = await db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).executeTakeFirst()
        if (!key) {
          cache.delete(prefix)
          secretMatches(secret, hashSecret(''))
          return undefined
        }
        entry = { key, readAt: at }
        cache.set(prefix, entry)
      }
      const { key } = entry
      if (!secretMatches(secret, key.secret_hash) || key.revoked !== 0) return undefined
      if (at - key.last_used >= LAST_USED_EVERY_MS) {
        key.last_used = at
        await db.updateTable('api_keys').set({ last_used: at }).where('id', '=', key.id).execute()
      }
      return key
    },

    /** Revokes a key by id; false when there is no such active key. */
    async revoke(id: number): Promise<boolean> {
      const result = await db
        .updateTable('api_keys')
        .set({ revoked: now() })
        .where('id', '=', id)
        .where('revoked', '=', 0)
        .executeTakeFirst()
      await invalidations.publish({ kind: 'apiKey', id })
      return result.numUpdatedRows > 0n
    },

    async get(id: number): Promise<ApiKey | undefined> {
      return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
    },

    /** Keys of a user or an app, newest first; secrets are never returned. */
    async list(filter: { crmId?: number; appId?: number } = {}): Promise<ApiKey[]> {
      let query = db.selectFrom('api_keys').selectAll()
      if (filter.crmId !== undefined) query = query.where('crm_id', '=', filter.crmId)
      if (filter.appId !== undefined) query = query.where('app_id', '=', filter.appId)
      return query.orderBy('id', 'desc').execute()
    },
  }
}

export type ApiKeys = ReturnType<typeof createApiKeys>
