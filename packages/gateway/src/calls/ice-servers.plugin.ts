import type { Service } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { GatewayConfig } from '../config.ts'
import type { GuestResolver } from '../guests/guest-resolver.ts'
import { turnCredentials } from './turn-credentials.ts'

export interface IceServersPluginOptions {
  calls: GatewayConfig['Calls']
  publicOrigin: string
  now: () => number
  /** Resolves the guest of an invite code and device (the chat module decides who may call); absent without a chat module. */
  resolveGuest?: GuestResolver
}

const IceServer = Type.Object({
  urls: Type.Array(Type.String()),
  username: Type.Optional(Type.String()),
  credential: Type.Optional(Type.String()),
})

const iceServers = {
  description:
    'STUN servers for anyone; a signed-in session, or a guest of a personal invite (X-Invite-Code and X-Device-Guid), also gets the TURN relays with credentials.',
  // Open to anyone: credentials add to the answer, none are required.
  security: [],
  response: {
    200: Type.Object({
      ice_servers: Type.Array(IceServer, { description: 'RTCConfiguration.iceServers as the browser takes them.' }),
      ice_transport_policy: Type.Union([Type.Literal('all'), Type.Literal('relay')]),
      expires_at: Type.String({
        description: 'ISO time the TURN credentials stop working; ask again before a later call.',
      }),
    }),
  },
}

/** The gateway's own STUN address: the host and port of PublicOrigin, on UDP (spec: "The gateway" 10). */
export function gatewayStunUrl(publicOrigin: string): string {
  const url = new URL(publicOrigin)
  const port = url.port || (url.protocol === 'https:' ? '443' : '80')
  return `stun:${url.hostname}:${port}`
}

/**
 * GET /auth/v1/call/ice_servers: the ICE servers a browser calls with; for a signed-in person also
 * the TURN relays, with credentials made for them now (docs/calls.md).
 */
export default async function iceServersPlugin(
  app: Service,
  { calls, publicOrigin, now, resolveGuest }: IceServersPluginOptions,
) {
  const stun = [...calls.StunUrls, ...(calls.GatewayStun ? [gatewayStunUrl(publicOrigin)] : [])]

  /** Who the TURN credentials are for: the CRM id, `g<guest id>` for a guest who may call, or undefined. */
  async function relayUser(request: FastifyRequest): Promise<string | undefined> {
    const { caller } = request
    if (caller.keyType === 'session' && caller.crmId !== 0) return String(caller.crmId)
    const code = request.headers['x-invite-code']
    const deviceGuid = request.headers['x-device-guid']
    if (caller.keyType !== '' || !resolveGuest || typeof code !== 'string' || typeof deviceGuid !== 'string') {
      return undefined
    }
    try {
      const resolved = await resolveGuest(code, deviceGuid)
      return resolved?.callsAllowed ? `g${resolved.guest}` : undefined
    } catch (error) {
      // The chat module is away: the guest calls without the relay rather than not at all.
      request.log.warn({ err: error }, 'could not ask the chat module about a calling guest')
      return undefined
    }
  }

  app.get('/call/ice_servers', { schema: iceServers }, async (request, reply) => {
    const expiresAt = now() + calls.TurnTtlSeconds * 1000
    const servers: { urls: string[]; username?: string; credential?: string }[] = []
    if (stun.length > 0) servers.push({ urls: stun })
    // The relay is for signed-in people and for guests the chat module says may call (a personal
    // invite); anyone else gets the STUN servers, which are no secret, and no TURN credentials.
    const user = await relayUser(request)
    if (calls.TurnUrls.length > 0 && user) {
      servers.push({ urls: calls.TurnUrls, ...turnCredentials(calls.TurnSecret, user, expiresAt) })
    }
    // Credentials are personal and short-lived: no cache may keep or share them.
    reply.header('cache-control', 'no-store')
    return {
      ice_servers: servers,
      ice_transport_policy: calls.IceTransportPolicy,
      expires_at: new Date(expiresAt).toISOString(),
    }
  })
}
