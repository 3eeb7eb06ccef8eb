import { ApiError, type Service, sendError, verifyHop } from '@atrium/platform'
import { Type } from 'typebox'
import { toUserView, UserView } from '../users/user-view.ts'
import type { Users } from '../users/users.repository.ts'

export interface InternalPluginOptions {
  users: Users
  /** ServiceSecret: modules sign their calls with it (X-Service-Auth). */
  serviceSecret: string
}

const getUser = {
  security: [{ serviceAuth: [] }],
  params: Type.Object({ crmId: Type.String({ pattern: '^[1-9][0-9]{0,15}$' }) }),
  response: { 200: Type.Object({ user: UserView }) },
}

/**
 * Module-to-gateway calls under /private (ARCHITECTURE.md, "Security defaults"): every request
 * under the prefix, known path or not, must carry a valid inter-service signature, or it is
 * refused with Unauthenticated before anything else — so nobody on the internet can probe or
 * reach an internal path through the gateway. Registered with prefix `/private`.
 */
export default async function internalPlugin(app: Service, { users, serviceSecret }: InternalPluginOptions) {
  app.addHook('onRequest', async (request, reply) => {
    if (verifyHop(serviceSecret, { method: request.method, url: request.url, headers: request.headers })) return
    return sendError(reply, new ApiError('Unauthenticated', 'missing or invalid inter-service credential'))
  })

  app.get('/v1/users/:crmId', { schema: getUser }, async (request) => {
    const crmId = Number(request.params.crmId)
    const user = await users.get(crmId)
    if (!user) throw new ApiError('NotFound', 'No such user.')
    return { user: toUserView(user, await users.contactsOf(crmId)) }
  })

  const unknown = async (request: { method: string; url: string }) => {
    throw new ApiError('NotFound', `No route for ${request.method} ${request.url.split('?')[0]}`)
  }
  app.all('/', { schema: { hide: true } }, unknown)
  app.all('/*', { schema: { hide: true } }, unknown)
}
