import { ApiError, DEVICE_GUID_PATTERN, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import { InviteKind } from '../invites/invites.repository.ts'
import type { Store } from '../store.ts'

const callGuest = {
  querystring: Type.Object(
    {
      code: Type.String({ minLength: 1, maxLength: 64 }),
      device_guid: Type.String({ pattern: DEVICE_GUID_PATTERN }),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      guest: Type.String({ description: 'The guest id of the invite code on that device.' }),
      calls_allowed: Type.Boolean({ description: 'True for a guest of a personal invite (spec: "Authentication" 7).' }),
    }),
  },
}

/**
 * GET /private/v1/call_guest: whether the guest an invite code and device resolve to may call;
 * the gateway asks before it hands a guest TURN credentials (docs/calls.md).
 */
export async function internalCallsPlugin(app: Service, { store }: { store: Store }) {
  app.get('/call_guest', { schema: callGuest }, async (request) => {
    const guest = await store.invites.findGuest(request.query.code, request.query.device_guid)
    if (!guest) throw new ApiError('InviteNotFound', 'no guest of this invite on this device')
    const kind = await store.calls.guestInviteKind(guest.timetick)
    return { guest: String(guest.timetick), calls_allowed: kind === InviteKind.Personal }
  })
}
