import type { ReplyView, RequestView } from '@atrium/platform'
import type { FastifyReply } from 'fastify'
import { readCookie } from '../auth/authenticate.ts'
import { ANONYMOUS, type GatewayRequest } from '../auth/caller.ts'

export interface SessionCookieOptions {
  /** Sessions.CookieName. */
  name: string
  /** PublicOrigin: the cookie is `Secure` when it is https. */
  publicOrigin: string
  /** Sessions.AbsoluteSeconds: the cookie's Max-Age, so the browser keeps it as long as the session can live. */
  maxAgeSeconds: number
}

/**
 * The session cookie: `<name>=<token>; Path=/; HttpOnly; SameSite=Lax; Max-Age=…` plus `Secure`
 * when the gateway is reached over https. HttpOnly keeps the token from scripts; SameSite=Lax
 * keeps it off cross-site subrequests (the CSRF check covers the rest).
 */
export function createSessionCookie({ name, publicOrigin, maxAgeSeconds }: SessionCookieOptions) {
  const attributes = `Path=/; HttpOnly; SameSite=Lax${publicOrigin.startsWith('https:') ? '; Secure' : ''}`

  function read(request: RequestView): string | undefined {
    return readCookie(request.headers.cookie, name)
  }

  function clear(reply: ReplyView): void {
    reply.removeHeader('set-cookie')
    reply.header('set-cookie', `${name}=; ${attributes}; Max-Age=0`)
  }

  return {
    name,
    read,
    clear,

    /** Sets the cookie to a new session token, replacing any cookie header set earlier in this reply. */
    set(reply: FastifyReply, token: string): void {
      reply.removeHeader('set-cookie')
      reply.header('set-cookie', `${name}=${token}; ${attributes}; Max-Age=${maxAgeSeconds}`)
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
