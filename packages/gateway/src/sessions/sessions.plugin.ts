import { ApiError, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import { toUserView, UserView } from '../users/user-view.ts'
import type { Users } from '../users/users.repository.ts'
import type { SessionCookie } from './session-cookie.ts'
import type { Sessions } from './sessions.repository.ts'

export interface SessionsPluginOptions {
  sessions: Sessions
  users: Users
  cookie: SessionCookie
}

const sessionInfo = {
  response: {
    200: Type.Object({
      crmId: Type.String({ description: 'The signed-in user; "0" for an app or service key.' }),
      appId: Type.String({ description: 'The app of an app token or service key; "0" otherwise.' }),
      keyType: Type.String({ description: 'How the caller authenticated: session, user, service or app.' }),
      scopes: Type.Array(Type.String()),
      csrf: Type.String({ description: 'The session CSRF token for X-CSRF-Token; empty unless signed in by cookie.' }),
      user: Type.Optional(UserView),
    }),
  },
}
const signedOut = { response: { 200: Type.Object({ sessions: Type.Integer({ description: 'Sessions ended.' }) }) } }

/**
 * The caller's own session under /auth/v1: who am I (with the CSRF token a page needs), sign out
 * of this session, sign out everywhere. Signing out clears the cookie.
 */
export default async function sessionsPlugin(app: Service, { sessions, users, cookie }: SessionsPluginOptions) {
  app.get('/session', { schema: sessionInfo }, async (request) => {
    const { caller } = request
    if (caller.keyType === '') throw new ApiError('SessionRequired', 'Not signed in.')
    const user = caller.crmId === 0 ? undefined : await users.get(caller.crmId)
    return {
      crmId: String(caller.crmId),
      appId: String(caller.appId),
      keyType: caller.keyType,
      scopes: caller.scopes,
      csrf: caller.csrf,
      ...(user ? { user: toUserView(user, await users.contactsOf(user.crm_id)) } : {}),
    }
  })

  app.post('/logout', { schema: signedOut }, async (request, reply) => {
    const { caller } = request
    if (caller.sessionId === '')
      throw new ApiError('SessionRequired', 'Only a session can sign out; revoke a key instead.')
    await sessions.revoke(caller.sessionId)
    if (caller.viaCookie) cookie.clear(reply)
    return { sessions: 1 }
  })

  app.post('/logout_all', { schema: signedOut }, async (request, reply) => {
    const { caller } = request
    if (caller.keyType !== 'session' || caller.crmId === 0) {
      throw new ApiError('SessionRequired', 'Signing out everywhere needs a signed-in user session.')
    }
    const count = await sessions.revokeAll(caller.crmId)
    if (caller.viaCookie) cookie.clear(reply)
    return { sessions: count }
  })
}
