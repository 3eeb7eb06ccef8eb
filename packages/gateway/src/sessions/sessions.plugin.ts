import { createHash } from 'node:crypto'
import { ApiError, type Service } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
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

const SessionId = Type.String({
  pattern: '^[0-9a-f]{1,16}$',
  description: 'A public id of the session (not its token).',
})
const SessionView = Type.Object({
  id: SessionId,
  method: Type.String({
    description: 'How it was signed in: email_otp, phone_otp, magic_link, passkey, fido2_key, user_key, …',
  }),
  created: Type.Integer(),
  lastSeen: Type.Integer({ description: 'Epoch ms of its last request (to the minute across gateways).' }),
  ip: Type.String(),
  userAgent: Type.String(),
  current: Type.Boolean({ description: 'The session this request came with.' }),
})
const listSessions = { response: { 200: Type.Object({ sessions: Type.Array(SessionView) }) } }
const endSession = {
  params: Type.Object({ id: SessionId }),
  response: { 200: Type.Object({ sessions: Type.Integer() }) },
}

/** The id a session is shown by: derived from its stored hash, so neither the token nor the key leaves the gateway. */
function publicId(sessionId: string): string {
  return createHash('sha256').update(`session:${sessionId}`).digest('hex').slice(0, 16)
}

/**
 * The caller's own sessions under /auth/v1: who am I (with the CSRF token a page needs), sign out
 * of this session, sign out everywhere, the list of signed-in devices and ending one of them.
 * Signing out of the current session clears the cookie.
 */
export default async function sessionsPlugin(app: Service, { sessions, users, cookie }: SessionsPluginOptions) {
  function userSession(request: FastifyRequest, refusal: string) {
    const { caller } = request
    if (caller.keyType !== 'session' || caller.crmId === 0) throw new ApiError('SessionRequired', refusal)
    return caller
  }

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
    const caller = userSession(request, 'Signing out everywhere needs a signed-in user session.')
    const count = await sessions.revokeAll(caller.crmId)
    if (caller.viaCookie) cookie.clear(reply)
    return { sessions: count }
  })

  app.get('/sessions', { schema: listSessions }, async (request) => {
    const caller = userSession(request, 'The list of sessions needs a signed-in user session.')
    const rows = await sessions.list(caller.crmId)
    return {
      sessions: rows.map((row) => ({
        id: publicId(row.id),
        method: row.method,
        created: row.created,
        lastSeen: row.last_seen,
        ip: row.ip,
        userAgent: row.user_agent,
        current: row.id === caller.sessionId,
      })),
    }
  })

  // Remote sign-out: ends one of the user's sessions (on another gateway within seconds, its cache's trust).
  app.delete('/sessions/:id', { schema: endSession }, async (request, reply) => {
    const caller = userSession(request, 'Ending a session needs a signed-in user session.')
    const row = (await sessions.list(caller.crmId)).find((session) => publicId(session.id) === request.params.id)
    if (!row) throw new ApiError('NotFound', 'No such session of yours.')
    await sessions.revoke(row.id)
    request.log.info({ method: row.method }, 'session ended remotely')
    if (row.id === caller.sessionId && caller.viaCookie) cookie.clear(reply)
    return { sessions: 1 }
  })
}
