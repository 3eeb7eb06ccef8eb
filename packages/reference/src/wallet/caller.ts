import { ApiError, readIdentity } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'

/** The signed-in user (X-Crm) and app (X-AppId) of a /wallet/v1 call; Unauthenticated without a user. */
export function requireUser(request: FastifyRequest): { crmId: number; appId: number } {
  const { crmId, appId } = readIdentity(request)
  if (crmId === 0) throw new ApiError('Unauthenticated', 'wallet operations need a signed-in user (X-Crm)')
  return { crmId, appId }
}
