import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { sendError } from './envelope.ts'
import { ApiError } from './errors.ts'
import { currentRequestId } from './request-context.ts'

/**
 * Identity between the gateway and the modules (ARCHITECTURE.md, "One request through the
 * gateway", step 7): the gateway sets the user-context headers and signs the hop with the shared
 * inter-service secret, so a module can tell the gateway from anyone else on its network. The
 * signature covers the method, the path with query, the time and every identity header, so a
 * captured request cannot be replayed later or with another identity.
 */

/** The user-context headers the gateway forwards (spec: "Headers forwarded to backend modules"), lower-case. */
export const IDENTITY_HEADERS = [
  'x-crm',
  'x-scopes',
  'x-keytype',
  'x-appid',
  'x-pkey-crm',
  'x-country',
  'x-project',
] as const

/** The header carrying the hop signature: `v1.<epoch ms>.<hex HMAC-SHA256>`. */
export const SERVICE_AUTH_HEADER = 'x-service-auth'

/** A well-formed X-Device-Guid value (spec "Authentication" 6): 8–64 letters, digits or `-`. */
export const DEVICE_GUID_PATTERN = '^[A-Za-z0-9-]{8,64}$'

/** How far a signature's time may be from the receiver's clock. */
export const SERVICE_AUTH_MAX_SKEW_MS = 60_000

/** The smallest accepted inter-service secret, in characters. */
export const SERVICE_SECRET_MIN_LENGTH = 32

type HeaderBag = Record<string, string | string[] | undefined>

export interface Hop {
  method: string
  /** Path with query string, as sent on the wire. */
  url: string
  headers: HeaderBag
}

function headerValue(headers: HeaderBag, name: string): string {
  const value = headers[name]
  return Array.isArray(value) ? value.join(',') : (value ?? '')
}

/** The secret last used as a prepared key: a process signs with one secret, so it is made once. */
let preparedSecret: string | undefined
let preparedKey: KeyObject | undefined

function hmacKey(secret: string): KeyObject {
  if (secret !== preparedSecret || !preparedKey) {
    preparedKey = createSecretKey(secret, 'utf8')
    preparedSecret = secret
  }
  return preparedKey
}

function signature(secret: string, hop: Hop, time: number): string {
  // Method, path with query, time and every identity header, one per line.
  let canonical = `${hop.method.toUpperCase()}\n${hop.url}\n${time}`
  for (const name of IDENTITY_HEADERS) canonical += `\n${headerValue(hop.headers, name)}`
  return createHmac('sha256', hmacKey(secret)).update(canonical).digest('hex')
}

/** The X-Service-Auth value for a hop; identity headers must already be set on `hop.headers`. */
export function signHop(secret: string, hop: Hop, now = Date.now()): string {
  return `v1.${now}.${signature(secret, hop, now)}`
}

/** True when the hop carries a valid, fresh signature made with the secret. */
export function verifyHop(secret: string, hop: Hop, now = Date.now()): boolean {
  const match = /^v1\.(\d{1,16})\.([0-9a-f]{64})$/.exec(headerValue(hop.headers, SERVICE_AUTH_HEADER))
  if (!match) return false
  const time = Number(match[1])
  if (Math.abs(now - time) > SERVICE_AUTH_MAX_SKEW_MS) return false
  const expected = Buffer.from(signature(secret, hop, time), 'hex')
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'))
}

/**
 * Signs outgoing headers for a request from one Atrium process to another. Made while handling a
 * request, the call carries that request's X-Request-Id, so both processes log it under one id.
 */
export function signedHeaders(secret: string, method: string, url: string, headers: Record<string, string> = {}) {
  const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
  const requestId = currentRequestId()
  if (requestId !== undefined && lower['x-request-id'] === undefined) lower['x-request-id'] = requestId
  const { pathname, search } = new URL(url, 'http://internal')
  return { ...lower, [SERVICE_AUTH_HEADER]: signHop(secret, { method, url: pathname + search, headers: lower }) }
}

export interface ServiceAuthOptions {
  secret: string
  /** Paths served without a signature (health checks). */
  exempt: string[]
}

/** Refuses with Unauthenticated (401) every request that is not signed by another Atrium process. */
export function installServiceAuth(app: FastifyInstance, { secret, exempt }: ServiceAuthOptions): void {
  const open = new Set(exempt)
  app.addHook('onRequest', async (request, reply) => {
    if (open.has(request.url.split('?')[0]!)) return
    if (verifyHop(secret, { method: request.method, url: request.url, headers: request.headers })) return
    return sendError(reply, new ApiError('Unauthenticated', 'missing or invalid inter-service credential'))
  })
}

/** The caller as the gateway describes it. */
export interface Identity {
  /** CRM id of the user, 0 when no user is signed in. */
  crmId: number
  scopes: string[]
  /** Type of key used: `session`, `user`, `service`, `app`, or empty. */
  keyType: string
  /** Calling application id, 0 for none. */
  appId: number
  /**
   * CRM id of the user who owns the key or app the caller authenticated with, when the caller does
   * not act as that user (a service key or an AppLogin token: the app's owner); 0 otherwise.
   */
  pkeyCrm: number
  country: string
  project: string
}

function positiveId(text: string): number {
  return /^[1-9][0-9]{0,15}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : 0
}

/** Reads the identity headers of a request already verified by installServiceAuth. */
export function readIdentity(request: FastifyRequest): Identity {
  const header = (name: string) => headerValue(request.headers, name).trim()
  return {
    crmId: positiveId(header('x-crm')),
    scopes: header('x-scopes')
      .split(/[\s,]+/)
      .filter(Boolean),
    keyType: header('x-keytype'),
    appId: positiveId(header('x-appid')),
    pkeyCrm: positiveId(header('x-pkey-crm')),
    country: header('x-country'),
    project: header('x-project'),
  }
}
