import { ApiError, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import type { Apps } from '../apps/apps.repository.ts'
import type { Sessions } from '../sessions/sessions.repository.ts'
import { Client } from './sign-in.schema.ts'
import type { SignIn } from './sign-in.ts'

export interface AppLoginPluginOptions {
  apps: Apps
  sessions: Sessions
  signIn: SignIn
  /** Sessions.AbsoluteSeconds: an app token ends this long after it was issued. */
  absoluteSeconds: number
}

const appLogin = {
  security: [],
  body: Type.Object(
    {
      appId: Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'The app id.' }),
      secret: Type.String({ minLength: 1, maxLength: 256, description: 'The app secret shown when it was created.' }),
      client: Type.Optional(Client),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      token: Type.String({ description: 'Send as `Authorization: Bearer <token>`.' }),
      expiresAt: Type.Integer({
        description: 'Latest end of the token, epoch ms; unused for Sessions.IdleSeconds it ends earlier.',
      }),
    }),
  },
}

/**
 * AppLogin (spec: "Authentication", Service methods): an app signs in with its id and secret and
 * gets an app session token for `Authorization: Bearer`. A wrong id and a wrong secret get the
 * same answer, in the same time.
 */
export default async function appLoginPlugin(
  app: Service,
  { apps, sessions, signIn, absoluteSeconds }: AppLoginPluginOptions,
) {
  app.post('/app/login', { schema: appLogin, config: { signIn: true } }, async (request) => {
    const { appId, secret, client } = request.body
    const found = await apps.verify(Number(appId), secret)
    if (!found) {
      await signIn.record(
        request,
        { method: 'app_login', success: false, reason: 'invalid_credentials', appId: Number(appId) },
        client,
      )
      throw new ApiError('InvalidCredentials', 'Unknown app id or wrong secret.')
    }
    const { token, session } = await sessions.create({
      crmId: 0,
      appId: found.id,
      method: 'app_login',
      ip: request.ip,
      userAgent: String(request.headers['user-agent'] ?? ''),
    })
    await signIn.record(request, { method: 'app_login', success: true, appId: found.id }, client)
    return { token, expiresAt: session.created + absoluteSeconds * 1000 }
  })
}
