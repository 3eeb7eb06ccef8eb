import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { ApiError, type RequestView } from '@atrium/platform'

/** X-KeyType values: how the caller authenticated. Empty for an anonymous caller. */
export type KeyType = '' | 'session' | 'user' | 'service' | 'app'

/** Who is calling, as established by the gateway from the request's credentials. */
export interface Caller {
  /** CRM id of the user; 0 for anonymous callers and apps acting as themselves. */
  crmId: number
  scopes: string[]
  keyType: KeyType
  /** App id of an app session or a service key; 0 otherwise. */
  appId: number
  /**
   * X-Pkey-Crm: CRM id of the user who owns the credential, when the caller acts as something else
   * than that user (the app's owner for a service key or an AppLogin token); 0 otherwise.
   */
  pkeyCrm: number
  /** Session id (hash of the cookie token), empty when not authenticated by a session. */
  sessionId: string
  /** Id of the API key the caller authenticated with (`user`/`service` keys); 0 otherwise. */
  apiKeyId: number
  /** The session's CSRF token; empty when not authenticated by a cookie session. */
  csrf: string
  /** True when the credential came in a cookie (so CSRF checks apply). */
  viaCookie: boolean
}

/** A value now, or a promise of it: the request checks answer at once when nothing needs reading. */
export type Awaitable<T> = T | Promise<T>

export const ANONYMOUS: Caller = Object.freeze({
  crmId: 0,
  scopes: [],
  keyType: '',
  appId: 0,
  pkeyCrm: 0,
  sessionId: '',
  apiKeyId: 0,
  csrf: '',
  viaCookie: false,
}) as Caller

/** A request as the gateway's checks and proxy read it: Fastify's, or the front door's (@atrium/platform). */
export type GatewayRequest = RequestView & { caller: Caller }

/** True when the caller is a signed-in user or an authenticated app or key. */
export function isAuthenticated(caller: Caller): boolean {
  return caller.keyType !== ''
}

/**
 * Refuses a caller without `scope`: an anonymous one with SessionRequired (401, sign in first), an
 * authenticated one with Forbidden (403, these credentials will not do).
 */
export function requireScope(caller: Caller, scope: string, message: string): void {
  if (caller.scopes.includes(scope)) return
  throw new ApiError(isAuthenticated(caller) ? 'Forbidden' : 'SessionRequired', message)
}

/**
 * The caller as a signed-in user's session (a browser, or the session token as a bearer), or
 * SessionRequired with `refusal`: for what a person manages, never a key or an app token.
 */
export function requireUserSession(caller: Caller, refusal: string): Caller {
  if (caller.keyType !== 'session' || caller.crmId === 0) throw new ApiError('SessionRequired', refusal)
  return caller
}

/** A new random token for a cookie, link or key: 32 bytes, base64url. */
export function newToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/** The stored form of a secret: SHA-256, hex. Secrets here are random, so no salt or stretching is needed. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/** Compares a presented secret with a stored hash in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex')
  const stored = Buffer.from(storedHash, 'hex')
  return stored.length === presented.length && timingSafeEqual(presented, stored)
}

/** What a scope may be called: 1 to 64 letters, digits and `: . _ -` (the CLI and the operator panel check it). */
export const SCOPE_NAME = /^[A-Za-z0-9:._-]{1,64}$/

/** Scopes as stored (space-separated) to a list. */
export function parseScopes(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean)
}
