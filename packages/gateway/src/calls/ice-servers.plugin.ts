import type { Service } from '@atrium/platform'
import { Type } from 'typebox'
import type { GatewayConfig } from '../config.ts'
import { turnCredentials } from './turn-credentials.ts'

export interface IceServersPluginOptions {
  calls: GatewayConfig['Calls']
  publicOrigin: string
  now: () => number
}

const IceServer = Type.Object({
  urls: Type.Array(Type.String()),
  username: Type.Optional(Type.String()),
  credential: Type.Optional(Type.String()),
})

const iceServers = {
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
export default async function iceServersPlugin(app: Service, { calls, publicOrigin, now }: IceServersPluginOptions) {
  const stun = [...calls.StunUrls, ...(calls.GatewayStun ? [gatewayStunUrl(publicOrigin)] : [])]

  app.get('/call/ice_servers', { schema: iceServers }, async (request, reply) => {
    const { caller } = request
    const expiresAt = now() + calls.TurnTtlSeconds * 1000
    const servers: { urls: string[]; username?: string; credential?: string }[] = []
    if (stun.length > 0) servers.push({ urls: stun })
    // The relay is for signed-in people: a caller without a session (a guest of an invite) gets
    // the STUN servers, which are no secret, and no TURN credentials.
    if (calls.TurnUrls.length > 0 && caller.keyType === 'session' && caller.crmId !== 0) {
      servers.push({ urls: calls.TurnUrls, ...turnCredentials(calls.TurnSecret, String(caller.crmId), expiresAt) })
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
