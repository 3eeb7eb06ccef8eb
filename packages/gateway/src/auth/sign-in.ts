import type { FastifyReply, FastifyRequest } from 'fastify'
import type { LoginAttempt, LoginAudit } from '../audit/login-audit.repository.ts'
import type { SessionCookie } from '../sessions/session-cookie.ts'
import type { Sessions } from '../sessions/sessions.repository.ts'
import { toUserView } from '../users/user-view.ts'
import type { User, Users } from '../users/users.repository.ts'
import { hashSecret } from './caller.ts'
import type { ClientInfo } from './sign-in.schema.ts'

export interface SignInOptions {
  sessions: Sessions
  users: Users
  cookie: SessionCookie
  loginAudit: LoginAudit
  /** IP address to ISO country code; empty when unknown. */
  lookupCountry: (ip: string) => string
}

/** An attempt as a flow describes it; where it came from is read from the request. */
export type Attempt = Pick<LoginAttempt, 'method' | 'success' | 'reason' | 'crmId' | 'appId'>

function headerText(request: FastifyRequest, name: string): string {
  const value = request.headers[name]
  return typeof value === 'string' ? value : ''
}

/**
 * What every sign-in flow shares: the login audit record of each attempt, and the end of a
 * successful sign-in — a new session with a new id every time, the session cookie the browser
 * already had revoked (no session fixation), the cookie set, the success audited.
 */
export function createSignIn({ sessions, users, cookie, loginAudit, lookupCountry }: SignInOptions) {
  async function record(request: FastifyRequest, attempt: Attempt, client: ClientInfo = {}): Promise<void> {
    const acceptLanguage = headerText(request, 'accept-language').split(',')[0]?.split(';')[0]?.trim()
    await loginAudit.record({
      ...attempt,
      ip: request.ip,
      country: lookupCountry(request.ip),
      userAgent: headerText(request, 'user-agent'),
      screen: client.screen,
      deviceGuid: client.deviceGuid || headerText(request, 'x-device-guid'),
      timezone: client.timezone,
      language: client.language || acceptLanguage,
    })
  }

  return {
    record,

    /** Ends a proven sign-in: new session and cookie, old cookie session revoked, success audited. */
    async finish(
      request: FastifyRequest,
      reply: FastifyReply,
      { user, method, returnTo, client }: { user: User; method: string; returnTo: string; client?: ClientInfo },
    ) {
      const previous = cookie.read(request)
      if (previous) await sessions.revoke(hashSecret(previous))
      const { token, session } = await sessions.create({
        crmId: user.crm_id,
        method,
        ip: request.ip,
        userAgent: headerText(request, 'user-agent'),
      })
      await record(request, { method, success: true, crmId: user.crm_id }, client)
      cookie.set(reply, token)
      return { user: toUserView(user, await users.contactsOf(user.crm_id)), csrf: session.csrf, returnTo }
    },
  }
}

export type SignIn = ReturnType<typeof createSignIn>
