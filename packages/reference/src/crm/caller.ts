import { ApiError, readIdentity } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'

/** The scope that lets a key or app read every profile in full (docs/crm.md). */
export const CRM_READ_SCOPE = 'crm:read'

/** Who calls a /crm/v1 operation, from the signed identity headers only. */
export interface CrmCaller {
  /** The signed-in user (X-Crm); 0 for none. */
  crmId: number
  /** A service key (X-KeyType `service`) or a caller with the `crm:read` scope: reads any profile in full. */
  readsAll: boolean
}

/**
 * The caller of a /crm/v1 call; Unauthenticated when nobody is signed in and no key or app is
 * named, Forbidden for a key or app that is neither a user nor allowed to read every profile.
 */
export function requireCaller(request: FastifyRequest): CrmCaller {
  const { crmId, keyType, scopes } = readIdentity(request)
  const readsAll = keyType === 'service' || scopes.includes(CRM_READ_SCOPE)
  if (crmId === 0 && !readsAll) {
    if (keyType === '') throw new ApiError('Unauthenticated', 'CRM operations need a signed-in user (X-Crm)')
    throw new ApiError('Forbidden', `without a user, reading profiles needs the ${CRM_READ_SCOPE} scope`)
  }
  return { crmId, readsAll }
}
