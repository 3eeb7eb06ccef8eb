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
 * The session cookie: `<name>=<token>; Path=/; HttpOnly; SameSite=Lax; Max-Age=…` plus `Secure`
 * when the gateway is reached over https, and `Domain=<Sessions.CookieDomain>` when that is set (so
 * p1, p2, p3 and the project domain all receive it; docs/operations.md). HttpOnly keeps the token
 * from scripts; SameSite=Lax keeps it off cross-site subrequests (the CSRF check covers the rest).
 */
export function createSessionCookie({ name, domain, publicOrigin, maxAgeSeconds }: SessionCookieOptions) {
  const secure = publicOrigin.startsWith('https:') ? '; Secure' : ''
  const hostOnly = `Path=/; HttpOnly; SameSite=Lax${secure}`
  const attributes = domain === '' ? hostOnly : `Path=/; Domain=${domain}; HttpOnly; SameSite=Lax${secure}`
  // With a Domain, a host-only cookie of the same name left from before the setting is cleared too:
  // browsers send it first (it is older), and its ended session would hide the shared one.
  const clearLeftover = domain === '' ? undefined : `${name}=; ${hostOnly}; Max-Age=0`

  function read(request: RequestView): string | undefined {
    return readCookie(request.headers.cookie, name)
  }

  /** Replaces any cookie header set earlier in this reply (Set-Cookie headers accumulate). */
  function write(reply: ReplyView, value: string): void {
    reply.removeHeader('set-cookie')
    reply.header('set-cookie', value)
    if (clearLeftover) reply.header('set-cookie', clearLeftover)
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
