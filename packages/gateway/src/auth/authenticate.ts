import { ApiError, type RequestView } from '@atrium/platform'
import type { Apps } from '../apps/apps.repository.ts'
import type { Session, Sessions } from '../sessions/sessions.repository.ts'
import type { Users } from '../users/users.repository.ts'
import type { ApiKeys } from './api-keys.repository.ts'
import { ANONYMOUS, type Awaitable, type Caller, parseScopes } from './caller.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, set by the gateway's authentication hook for every request. */
    caller: Caller
  }
}

/** The header an API key may come in, besides `Authorization: Bearer`. */
export const API_KEY_HEADER = 'x-api-key'

const USER_CACHE_TRUST_MS = 5_000
const APP_CACHE_TRUST_MS = 5_000

/** Reads one cookie from a Cookie header without decoding anything else. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined
  // Walks the pairs in place: the header is read on every request, and splitting it allocates.
  for (let start = 0; start < header.length; ) {
    const semicolon = header.indexOf(';', start)
    const end = semicolon === -1 ? header.length : semicolon
    const eq = header.indexOf('=', start)
    if (eq !== -1 && eq < end && eq > start && header.slice(start, eq).trim() === name) {
      return header.slice(eq + 1, end).trim()
    }
    start = end + 1
  }
  return undefined
}

function bearerOf(request: RequestView): string | undefined {
  const header = request.headers.authorization
  if (!header) return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!match) throw new ApiError('InvalidCredentials', 'the Authorization header must be `Bearer <token>`')
  return match[1]
}

export interface AuthenticatorOptions {
  sessions: Sessions
  apiKeys: ApiKeys
  apps: Apps
  users: Users
  cookieName: string
}

/**
 * Establishes the caller from the request's credentials, in this order: an API key
 * (`Authorization: Bearer atr_…` or `X-Api-Key`), a bearer session token (AppLogin, or a user
 * session used outside a browser), the session cookie. A presented key or bearer token that is
 * not valid is refused (401) rather than treated as anonymous; an unknown or expired cookie
 * makes the caller anonymous, so a stale browser still reaches public pages.
 */
export function createAuthenticator({ sessions, apiKeys, apps, users, cookieName }: AuthenticatorOptions) {
  const userScopes = new Map<number, { scopes: string[]; readAt: number }>()
  const appOwners = new Map<number, { owner: number; readAt: number }>()
  // Scopes set here or in another worker of the node apply to the next request (server/invalidations.ts).
  users.invalidations.on((invalidation) => {
    if (invalidation.kind === 'user') userScopes.delete(invalidation.crmId)
  })

  /** The user's scopes: at once from the cache while it is trusted, else read. */
  function scopesOf(crmId: number): string[] | Promise<string[]> {
    const cached = userScopes.get(crmId)
    if (cached && Date.now() - cached.readAt < USER_CACHE_TRUST_MS) return cached.scopes
    return readScopes(crmId)
  }

  async function readScopes(crmId: number): Promise<string[]> {
    const at = Date.now()
    const user = await users.get(crmId)
    const scopes = user ? parseScopes(user.scopes) : []
    userScopes.set(crmId, { scopes, readAt: at })
    if (userScopes.size > 100_000) userScopes.delete(userScopes.keys().next().value!)
    return scopes
  }

  /**
   * The CRM id of an app's owner, undefined when there is no such app. An app's owner never
   * changes (AppPatch leaves it out), so only found apps are kept, and for as long as scopes are.
   */
  async function ownerOf(appId: number): Promise<number | undefined> {
    const at = Date.now()
    const cached = appOwners.get(appId)
    if (cached && at - cached.readAt < APP_CACHE_TRUST_MS) return cached.owner
    const app = await apps.get(appId)
    if (!app) return undefined
    appOwners.set(appId, { owner: app.owner, readAt: at })
    if (appOwners.size > 10_000) appOwners.delete(appOwners.keys().next().value!)
    return app.owner
  }

  async function fromApiKey(presented: string): Promise<Caller> {
    const key = await apiKeys.verify(presented)
    if (!key) throw new ApiError('InvalidCredentials', 'the API key is not valid or was revoked')
    // A user key acts as its owner, so X-Pkey-Crm would only repeat X-Crm; a service key acts as
    // its app, and the app's owner is the person behind the key.
    let pkeyCrm = 0
    if (key.key_type === 'service') {
      const owner = await ownerOf(key.app_id)
      if (owner === undefined) throw new ApiError('InvalidCredentials', 'the API key is not valid or was revoked')
      pkeyCrm = owner
    }
    return {
      crmId: key.crm_id,
      scopes: parseScopes(key.scopes),
      keyType: key.key_type === 'service' ? 'service' : 'user',
      appId: key.app_id,
      pkeyCrm,
      sessionId: '',
      apiKeyId: key.id,
      csrf: '',
      viaCookie: false,
    }
  }

  /**
   * The caller of a session token, undefined when it names no live session. Answered at once,
   * without a promise, when the session and its user's scopes are cached (most requests).
   */
  function fromSession(token: string, viaCookie: boolean): Awaitable<Caller | undefined> {
    const session = sessions.resolve(token)
    return session instanceof Promise
      ? session.then((found) => callerOf(found, viaCookie))
      : callerOf(session, viaCookie)
  }

  function callerOf(session: Session | undefined, viaCookie: boolean): Awaitable<Caller | undefined> {
    if (!session) return undefined
    if (session.app_id !== 0) return appCaller(session, viaCookie)
    const scopes = scopesOf(session.crm_id)
    return scopes instanceof Promise
      ? scopes.then((read) => userCaller(session, read, viaCookie))
      : userCaller(session, scopes, viaCookie)
  }

  async function appCaller(session: Session, viaCookie: boolean): Promise<Caller> {
    const pkeyCrm = (await ownerOf(session.app_id)) ?? 0
    return { ...ANONYMOUS, keyType: 'app', appId: session.app_id, pkeyCrm, sessionId: session.id, viaCookie }
  }

  function userCaller(session: Session, scopes: string[], viaCookie: boolean): Caller {
    return {
      crmId: session.crm_id,
      scopes,
      keyType: 'session',
      appId: 0,
      pkeyCrm: 0,
      sessionId: session.id,
      apiKeyId: 0,
      csrf: viaCookie ? session.csrf : '',
      viaCookie,
    }
  }

  async function fromBearer(token: string): Promise<Caller> {
    const caller = await fromSession(token, false)
    if (!caller) throw new ApiError('InvalidCredentials', 'the bearer token is not valid or expired')
    return caller
  }

  /** The caller of a request; at once, without a promise, for a cookie whose session is cached. */
  return function authenticate(request: RequestView): Awaitable<Caller> {
    const headerKey = request.headers[API_KEY_HEADER]
    if (typeof headerKey === 'string') return fromApiKey(headerKey)
    const bearer = bearerOf(request)
    if (bearer?.startsWith('atr_')) return fromApiKey(bearer)
    if (bearer) return fromBearer(bearer)
    const cookie = readCookie(request.headers.cookie, cookieName)
    if (!cookie) return ANONYMOUS
    const caller = fromSession(cookie, true)
    return caller instanceof Promise ? caller.then((found) => found ?? ANONYMOUS) : (caller ?? ANONYMOUS)
  }
}

export type Authenticate = ReturnType<typeof createAuthenticator>
