import { ApiError, DEVICE_GUID_PATTERN, readIdentity } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import type { Caller } from './access.ts'
import type { InvitesRepository } from './invites/invites.repository.ts'

/** Header naming the invite code a guest joined with; the gateway passes it with X-Device-Guid. */
export const INVITE_CODE_HEADER = 'x-invite-code'
/** Header with the guest's device GUID (spec: "Authentication" 6). */
export const DEVICE_GUID_HEADER = 'x-device-guid'

const DEVICE_GUID = new RegExp(DEVICE_GUID_PATTERN)

/** The well-formed X-Device-Guid of a request, or undefined. */
export function deviceGuidOf(request: FastifyRequest): string | undefined {
  const deviceGuid = request.headers[DEVICE_GUID_HEADER]
  return typeof deviceGuid === 'string' && DEVICE_GUID.test(deviceGuid) ? deviceGuid : undefined
}

/** The device GUID and invite code a guest request carries, or undefined when malformed or missing. */
export function guestCredentials(request: FastifyRequest): { code: string; deviceGuid: string } | undefined {
  const code = request.headers[INVITE_CODE_HEADER]
  const deviceGuid = deviceGuidOf(request)
  if (typeof code !== 'string' || !deviceGuid) return undefined
  return { code, deviceGuid }
}

/**
 * Resolves who calls a /msg/v1 operation: the user in X-Crm, or else the guest that an invite
 * code and device GUID resolved to when the guest joined. Anyone else is Unauthenticated.
 */
export function createCallerResolver(invites: InvitesRepository) {
  return async function resolveCaller(request: FastifyRequest): Promise<Caller> {
    const identity = readIdentity(request)
    if (identity.crmId !== 0) return { member: identity.crmId, guest: false, appId: identity.appId }
    const credentials = guestCredentials(request)
    const guest = credentials && (await invites.findGuest(credentials.code, credentials.deviceGuid))
    if (!guest) throw new ApiError('Unauthenticated', 'sign in, or join an invite with X-Invite-Code and X-Device-Guid')
    return { member: guest.timetick, guest: true, appId: 0 }
  }
}

export type CallerResolver = ReturnType<typeof createCallerResolver>
