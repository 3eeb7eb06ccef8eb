import { ApiError, DISPLAY_NAME_PATTERN, type Service } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Apps } from '../apps/apps.repository.ts'
import type { ApiKey, ApiKeys } from './api-keys.repository.ts'
import { parseScopes, requireUserSession } from './caller.ts'

export interface ApiKeysPluginOptions {
  apiKeys: ApiKeys
  apps: Apps
}

const Id = Type.String({ pattern: '^[1-9][0-9]{0,15}$' })
const Scope = Type.String({ pattern: '^[A-Za-z0-9:._-]{1,64}$' })

const KeyView = Type.Object({
  id: Id,
  prefix: Type.String({ description: 'Public part of the key (`atr_<prefix>_…`), to tell keys apart.' }),
  name: Type.String(),
  keyType: Type.Union([Type.Literal('user'), Type.Literal('service')]),
  appId: Type.String({ description: 'The app of a service key; "0" for a user key.' }),
  scopes: Type.Array(Type.String()),
  created: Type.Integer(),
  lastUsed: Type.Integer({ description: 'Epoch ms, to the minute; 0 when never used.' }),
  revoked: Type.Integer({ description: 'Epoch ms of revocation; 0 while active.' }),
})

const createKey = {
  body: Type.Object(
    {
      // No control characters: a name is shown to people, and PostgreSQL refuses NUL in text.
      name: Type.String({ minLength: 1, maxLength: 100, pattern: DISPLAY_NAME_PATTERN }),
      scopes: Type.Optional(
        Type.Array(Scope, { maxItems: 50, description: 'A subset of your own scopes; default none.' }),
      ),
      appId: Type.Optional(Id),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      key: Type.String({ description: 'The whole key; shown only in this answer.' }),
      apiKey: KeyView,
    }),
  },
}
const listKeys = { response: { 200: Type.Object({ keys: Type.Array(KeyView) }) } }
const revokeKey = {
  params: Type.Object({ id: Id }),
  response: { 200: Type.Object({ revoked: Type.Boolean() }) },
}

function toKeyView(key: ApiKey) {
  return {
    id: String(key.id),
    prefix: key.prefix,
    name: key.name,
    keyType: key.key_type === 'service' ? ('service' as const) : ('user' as const),
    appId: String(key.app_id),
    scopes: parseScopes(key.scopes),
    created: key.created,
    lastUsed: key.last_used,
    revoked: key.revoked,
  }
}

// Keys are minted and managed from a signed-in user session only: a key may not mint keys.
const sessionUser = (request: FastifyRequest) =>
  requireUserSession(request.caller, 'API keys are managed from a signed-in session, not with a key or app token.')

/**
 * API keys under /auth/v1/keys: a user key acts as its user; a service key acts as an app the
 * user owns. The key is shown once, at creation; lists show only its public prefix. Scopes of a
 * new key are a subset of the creator's own, so a key never grants more than its creator has.
 */
export default async function apiKeysPlugin(app: Service, { apiKeys, apps }: ApiKeysPluginOptions) {
  async function ownedAppIds(crmId: number): Promise<Set<number>> {
    return new Set((await apps.ownedBy(crmId)).map((owned) => owned.id))
  }

  app.post('/keys', { schema: createKey }, async (request) => {
    const caller = sessionUser(request)
    const scopes = [...new Set(request.body.scopes ?? [])]
    const missing = scopes.filter((scope) => !caller.scopes.includes(scope))
    if (missing.length > 0) throw new ApiError('Forbidden', `You do not have the scopes ${missing.join(', ')}.`)
    const appId = request.body.appId ? Number(request.body.appId) : 0
    if (appId !== 0 && !(await ownedAppIds(caller.crmId)).has(appId)) {
      throw new ApiError('Forbidden', 'Service keys can be made only for apps you own.')
    }
    const { key, row } = await apiKeys.create({
      keyType: appId === 0 ? 'user' : 'service',
      // A service key acts as its app alone (authenticate.ts forwards its crm_id as X-Crm).
      crmId: appId === 0 ? caller.crmId : 0,
      appId,
      scopes,
      name: request.body.name,
    })
    request.log.info({ keyId: row.id, prefix: row.prefix, keyType: row.key_type }, 'API key created')
    return { key, apiKey: toKeyView(row) }
  })

  app.get('/keys', { schema: listKeys }, async (request) => {
    const caller = sessionUser(request)
    const own = await apiKeys.list({ crmId: caller.crmId })
    const service = await Promise.all([...(await ownedAppIds(caller.crmId))].map((appId) => apiKeys.list({ appId })))
    const keys = [
      ...own.filter((key) => key.key_type === 'user'),
      ...service.flat().filter((key) => key.key_type === 'service'),
    ]
    return { keys: keys.sort((a, b) => b.id - a.id).map(toKeyView) }
  })

  app.delete('/keys/:id', { schema: revokeKey }, async (request) => {
    const caller = sessionUser(request)
    const key = await apiKeys.get(Number(request.params.id))
    const own =
      key !== undefined &&
      (key.key_type === 'service' ? (await ownedAppIds(caller.crmId)).has(key.app_id) : key.crm_id === caller.crmId)
    if (!key || !own) throw new ApiError('NotFound', 'No such API key of yours.')
    const revoked = await apiKeys.revoke(key.id)
    request.log.info({ keyId: key.id, prefix: key.prefix }, 'API key revoked')
    return { revoked }
  })
}
