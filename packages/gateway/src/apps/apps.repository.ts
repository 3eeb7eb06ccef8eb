import { ApiError, type TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import { hashSecret, newToken, secretMatches } from '../auth/caller.ts'
import type { AppsTable, GatewayDatabase } from '../db/schema.ts'

export type App = AppsTable

export interface NewApp {
  name: string
  owner: number
  flags?: number
  callbackUrl?: string
  origins?: string[]
  eventTypes?: string[]
}

/** What `update` changes; an omitted field keeps its value. */
export type AppPatch = Partial<Omit<NewApp, 'owner'>>

/** The origins an app may call from cross-origin. */
export function appOrigins(app: App): string[] {
  return JSON.parse(app.origins) as string[]
}

/**
 * An origin exactly as browsers send it (scheme, host and port, http or https, no path), as the
 * CLI and the operator panel accept it; throws InvalidRequest for anything else.
 */
export function normalizeOrigin(text: string): string {
  const url = URL.parse(text)
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new ApiError('InvalidRequest', `origin must be an http(s) URL: ${JSON.stringify(text.slice(0, 300))}`)
  }
  if (url.origin !== text.replace(/\/$/, '')) {
    throw new ApiError(
      'InvalidRequest',
      `origin must be scheme://host[:port] without a path: ${JSON.stringify(text.slice(0, 300))}`,
    )
  }
  return url.origin
}

/** The longest app name. */
export const APP_NAME_MAX = 200

/** An app name as given by an operator: 1 to APP_NAME_MAX characters. */
export function appName(text: string): string {
  if (text.length === 0 || text.length > APP_NAME_MAX) {
    throw new ApiError('InvalidRequest', `an app name has 1 to ${APP_NAME_MAX} characters`)
  }
  return text
}

/** An app's webhook URL as stored: an http(s) URL, or '' for none. */
export function normalizeWebhookUrl(text: string): string {
  if (text === '') return ''
  const url = URL.parse(text)
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new ApiError('InvalidRequest', `the webhook URL must be http(s): ${JSON.stringify(text.slice(0, 300))}`)
  }
  return url.href
}

/** The event types an app subscribes to, each once: letters, digits and `_ . : -`, at most 64 characters each. */
export function eventTypeList(types: readonly string[]): string[] {
  const unique = [...new Set(types)]
  const bad = unique.find((type) => !/^[A-Za-z0-9_.:-]{1,64}$/.test(type))
  if (bad !== undefined) throw new ApiError('InvalidRequest', `invalid event type ${JSON.stringify(bad.slice(0, 100))}`)
  return unique
}

/** A new webhook signing secret: `whsec_` and 32 random bytes, base64url. */
function newWebhookSecret(): string {
  return `whsec_${newToken()}`
}

/** Applications: they sign in with id and secret (AppLogin), own webhooks and CORS origins. */
export function createApps(db: Kysely<GatewayDatabase>, nextTick: TimetickGenerator, now: () => number = Date.now) {
  async function get(id: number): Promise<App | undefined> {
    return db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst()
  }

  return {
    get,

    /** Creates an app and returns its secret, shown this once (and in `app.webhook_secret` its webhook signing secret). */
    async create(input: NewApp): Promise<{ app: App; secret: string }> {
      const secret = newToken()
      const app: App = {
        id: nextTick(),
        name: input.name,
        owner: input.owner,
        secret_hash: hashSecret(secret),
        flags: input.flags ?? 0,
        callback_url: input.callbackUrl ?? '',
        origins: JSON.stringify(input.origins ?? []),
        event_types: JSON.stringify(input.eventTypes ?? []),
        created: now(),
        timetick_update: nextTick(),
        webhook_secret: newWebhookSecret(),
      }
      await db.insertInto('apps').values(app).execute()
      return { app, secret }
    },

    /** The app when the secret is its own (compared in constant time); undefined otherwise. */
    async verify(id: number, secret: string): Promise<App | undefined> {
      const app = await get(id)
      // Hash a dummy when the app is unknown, so timing does not tell unknown ids from wrong secrets.
      const matches = secretMatches(secret, app?.secret_hash ?? hashSecret(''))
      return app && matches ? app : undefined
    },

    /** A page of apps, newest first, older than the app id `before` when given (the operator panel). */
    async page({ before, limit }: { before?: number; limit: number }): Promise<App[]> {
      let query = db.selectFrom('apps').selectAll()
      if (before !== undefined) query = query.where('id', '<', before)
      return query.orderBy('id', 'desc').limit(limit).execute()
    },

    async list(): Promise<App[]> {
      return db.selectFrom('apps').selectAll().orderBy('id').execute()
    },

    /** Apps with a webhook: a callback URL and at least one enabled event type. */
    async withWebhooks(): Promise<App[]> {
      return db
        .selectFrom('apps')
        .selectAll()
        .where('callback_url', '!=', '')
        .where('event_types', '!=', '[]')
        .orderBy('id')
        .execute()
    },

    /** Changes the given fields (omitted ones keep their value); the updated app, or undefined when there is none. */
    async update(id: number, patch: AppPatch): Promise<App | undefined> {
      const { numUpdatedRows } = await db
        .updateTable('apps')
        .set({
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.flags !== undefined && { flags: patch.flags }),
          ...(patch.callbackUrl !== undefined && { callback_url: patch.callbackUrl }),
          ...(patch.origins !== undefined && { origins: JSON.stringify(patch.origins) }),
          ...(patch.eventTypes !== undefined && { event_types: JSON.stringify(patch.eventTypes) }),
          timetick_update: nextTick(),
        })
        .where('id', '=', id)
        .executeTakeFirst()
      return numUpdatedRows > 0n ? get(id) : undefined
    },

    /**
     * Gives the app a new secret and returns it (only its hash is kept); undefined when there is no
     * such app. AppLogin with the old secret fails from now on.
     */
    async rotateSecret(id: number): Promise<string | undefined> {
      const secret = newToken()
      const { numUpdatedRows } = await db
        .updateTable('apps')
        .set({ secret_hash: hashSecret(secret), timetick_update: nextTick() })
        .where('id', '=', id)
        .executeTakeFirst()
      return numUpdatedRows > 0n ? secret : undefined
    },

    /** Gives the app a new webhook signing secret and returns it; undefined when there is no such app. */
    async rotateWebhookSecret(id: number): Promise<string | undefined> {
      const secret = newWebhookSecret()
      const { numUpdatedRows } = await db
        .updateTable('apps')
        .set({ webhook_secret: secret, timetick_update: nextTick() })
        .where('id', '=', id)
        .executeTakeFirst()
      return numUpdatedRows > 0n ? secret : undefined
    },

    /** Apps owned by a user, for app: subjects. */
    async ownedBy(crmId: number): Promise<App[]> {
      return db.selectFrom('apps').selectAll().where('owner', '=', crmId).orderBy('id').execute()
    },

    /** The app whose origins list holds this origin, if any (first by id). */
    async byOrigin(origin: string): Promise<App | undefined> {
      const apps = await db
        .selectFrom('apps')
        .selectAll()
        .where('origins', 'like', `%${JSON.stringify(origin)}%`)
        .execute()
      return apps.find((app) => appOrigins(app).includes(origin))
    },
  }
}

export type Apps = ReturnType<typeof createApps>
