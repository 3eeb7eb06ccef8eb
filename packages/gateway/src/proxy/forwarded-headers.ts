import { IDENTITY_HEADERS, type RequestView, SERVICE_AUTH_HEADER, signHop } from '@atrium/platform'
import type { Caller } from '../auth/caller.ts'
import type { ClientAddress } from './client-address.ts'

type Headers = Record<string, string | string[] | undefined>

/**
 * Request headers a client may never send on to a module, compared after lower-casing and turning
 * `_` and `.` into `-` (servers and frameworks that fold those together would otherwise read
 * `X_Crm` as `X-Crm`). The identity headers, X-User-Id (never forwarded), the gateway's own
 * credentials, hop-by-hop headers (RFC 9110 §7.6.1) and the forwarding headers the gateway sets.
 */
const NEVER_FORWARDED = new Set<string>([
  ...IDENTITY_HEADERS,
  'x-user-id',
  SERVICE_AUTH_HEADER,
  'x-api-key',
  'x-csrf-token',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'http2-settings',
  'expect',
  'host',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-real-ip',
  'forwarded',
])

/** The header name as servers that fold `_` and `.` into `-` see it. */
function foldedName(name: string): string {
  const lower = name.toLowerCase()
  return lower.includes('_') || lower.includes('.') ? lower.replace(/[_.]/g, '-') : lower
}

/** Header names listed in a Connection header, folded. */
function connectionNames(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined
  const names = (Array.isArray(value) ? value.join(',') : value).split(',').map((name) => foldedName(name.trim()))
  return new Set(names)
}

/** The Cookie header without the gateway's session cookie; undefined when nothing else is left. */
function withoutCookie(cookie: string, name: string): string | undefined {
  if (!cookie.includes(name)) return cookie
  const kept = cookie
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part !== '' && part.slice(0, part.indexOf('=')).trim() !== name)
  return kept.length > 0 ? kept.join('; ') : undefined
}

export interface ForwardedHeadersOptions {
  /** The inter-service secret the hop is signed with. */
  serviceSecret: string
  /** Name of the gateway session cookie, removed from Cookie. */
  cookieName: string
  /** Project name sent in X-Project ('' for none). */
  project: string
  /** Country code for a client address ('' when unknown). */
  lookupCountry: (ip: string) => string
}

export interface ForwardContext {
  caller: Caller
  address: ClientAddress
  /** The app the call is made for: the caller's, or the CORS-approved app of the Origin. */
  appId: number
  /** Path and query exactly as the module receives them (they are signed). */
  url: string
  /**
   * The method and the headers to pass on, when the gateway makes the call itself (an MCP tool)
   * rather than forwarding the client's request; by default the request's own.
   */
  method?: string
  inbound?: Headers
}

/**
 * Returns the function that builds the headers of a proxied request: every client-sent identity
 * header and look-alike is dropped, then the identity is set from the authenticated caller, and
 * the hop is signed last (X-Service-Auth) so the module can verify the whole identity came from
 * the gateway. Host is the one the domain guard accepted (modules run the guard on it too).
 */
export function createForwardedHeaders({ serviceSecret, cookieName, project, lookupCountry }: ForwardedHeadersOptions) {
  return function forwardedHeaders(request: RequestView, context: ForwardContext): Headers {
    const { caller, address, appId, url } = context
    const inbound = context.inbound ?? request.headers
    const named = connectionNames(inbound.connection)
    const headers: Headers = {}
    for (const name in inbound) {
      if (name.charCodeAt(0) === 58) continue // HTTP/2 pseudo-headers
      const folded = foldedName(name)
      if (NEVER_FORWARDED.has(folded) || named?.has(folded)) continue
      headers[name] = inbound[name]
    }

    const cookie = headers.cookie
    if (typeof cookie === 'string') headers.cookie = withoutCookie(cookie, cookieName)
    // A Bearer token is always a gateway credential (authentication refuses unknown ones); other schemes pass.
    const authorization = headers.authorization
    if (typeof authorization === 'string' && /^bearer\s/i.test(authorization)) headers.authorization = undefined

    // The host the domain guard checked, in its canonical form: never a client's spelling of it.
    headers.host = request.authority.host
    headers['x-forwarded-for'] = address.forwardedFor
    // Fastify reads the proto from the last X-Forwarded-Proto entry, and only when the peer is a
    // trusted proxy; the host likewise, which is the one the guard checked.
    headers['x-forwarded-proto'] = forwardedProto(request)
    headers['x-forwarded-host'] = request.authority.host
    headers['x-request-id'] = request.id

    if (caller.crmId > 0) headers['x-crm'] = String(caller.crmId)
    if (caller.scopes.length > 0) headers['x-scopes'] = caller.scopes.join(' ')
    if (caller.keyType !== '') headers['x-keytype'] = caller.keyType
    if (appId > 0) headers['x-appid'] = String(appId)
    if (caller.pkeyCrm > 0) headers['x-pkey-crm'] = String(caller.pkeyCrm)
    const country = lookupCountry(address.ip)
    if (country) headers['x-country'] = country
    if (project) headers['x-project'] = project

    headers[SERVICE_AUTH_HEADER] = signHop(serviceSecret, { method: context.method ?? request.method, url, headers })
    return headers
  }
}

/** `http` or `https`: the forwarded scheme, or the connection's own when a proxy sent something else. */
function forwardedProto(request: RequestView): string {
  const proto = request.protocol
  if (proto === 'http' || proto === 'https') return proto
  return (request.raw.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http'
}

export type ForwardedHeaders = ReturnType<typeof createForwardedHeaders>
