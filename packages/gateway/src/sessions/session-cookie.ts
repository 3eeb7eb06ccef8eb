import { isIP } from 'node:net'
import type { ReplyView, RequestView } from '@atrium/platform'
import type { FastifyReply } from 'fastify'
import { readCookie } from '../auth/authenticate.ts'
import { ANONYMOUS, type GatewayRequest } from '../auth/caller.ts'

export interface SessionCookieOptions {
  /** Sessions.CookieName. */
  name: string
  /** Sessions.CookieDomain: '' for a cookie of the gateway's host alone. */
  domain: string
  /** PublicOrigin: the cookie is `Secure` when it is https. */
  publicOrigin: string
  /** Sessions.AbsoluteSeconds: the cookie's Max-Age, so the browser keeps it as long as the session can live. */
  maxAgeSeconds: number
}

/**
 * Every scope a session cookie for the host can have: host-only (''), and a Domain of the host or
 * of any parent of it with two labels or more. An IP address or a one-label host has host-only alone.
 */
export function cookieScopes(host: string): string[] {
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return ['']
  const labels = host.split('.')
  const scopes = ['']
  for (let first = 0; first <= labels.length - 2; first++) scopes.push(labels.slice(first).join('.'))
  return scopes
}

/**
 * The session cookie: `<name>=<token>; Path=/; HttpOnly; SameSite=Lax; Max-Age=…` plus `Secure`
 * when the gateway is reached over https, and `Domain=<Sessions.CookieDomain>` when that is set (so
 * p1, p2, p3 and the project domain all receive it; docs/operations.md). HttpOnly keeps the token
 * from scripts; SameSite=Lax keeps it off cross-site subrequests (the CSRF check covers the rest).
 */
export function createSessionCookie({ name, domain, publicOrigin, maxAgeSeconds }: SessionCookieOptions) {
  const secure = publicOrigin.startsWith('https:') ? '; Secure' : ''
  const scopeOf = (cookieDomain: string) =>
    cookieDomain === ''
      ? `Path=/; HttpOnly; SameSite=Lax${secure}`
      : `Path=/; Domain=${cookieDomain}; HttpOnly; SameSite=Lax${secure}`
  const attributes = scopeOf(domain)
  // A cookie of the same name that an earlier Sessions.CookieDomain (or none) left in another scope
  // is cleared too: browsers send the older one first, so its ended session would hide this one's,
  // and its clearing as stale would clear this one on every request. A `__Host-` cookie never has a Domain.
  const scopes = name.toLowerCase().startsWith('__host-') ? [''] : cookieScopes(new URL(publicOrigin).hostname)
  const leftovers = scopes
    .filter((scope) => scope !== domain.toLowerCase())
    .map((scope) => `${name}=; ${scopeOf(scope)}; Max-Age=0`)

  function read(request: RequestView): string | undefined {
    return readCookie(request.headers.cookie, name)
  }

  /** Replaces any cookie header set earlier in this reply (Set-Cookie headers accumulate). */
  function write(reply: ReplyView, value: string): void {
    reply.removeHeader('set-cookie')
    reply.header('set-cookie', value)
    for (const leftover of leftovers) reply.header('set-cookie', leftover)
  }

  function clear(reply: ReplyView): void {
    write(reply, `${name}=; ${attributes}; Max-Age=0`)
  }

  return {
    name,
    read,
    clear,

    /** Sets the cookie to a new session token, replacing any cookie header set earlier in this reply. */
    set(reply: FastifyReply, token: string): void {
      write(reply, `${name}=${token}; ${attributes}; Max-Age=${maxAgeSeconds}`)
    },

    /**
     * An onRequest hook, after authentication: a cookie that named no live session (unknown,
     * expired, revoked) is cleared, so the browser stops sending it.
     */
    clearStale(request: GatewayRequest, reply: ReplyView): void {
      if (request.caller === ANONYMOUS && read(request) !== undefined) clear(reply)
    },
  }
}

export type SessionCookie = ReturnType<typeof createSessionCookie>
