import { Type } from 'typebox'
import type { GatewayConfig } from '../config.ts'

/** The ICE servers and TURN credentials handed to calls (docs/calls.md); spread into the gateway's settings. */
export const callsSettings = {
  Calls: Type.Object(
    {
      TurnUrls: Type.Array(Type.String({ pattern: '^turns?:[^\\s]+$' }), {
        default: [],
        description:
          'TURN relays handed to callers with short-lived credentials (turn:host:3478?transport=udp, turns:host:5349?transport=tcp; docs/calls.md shows coturn beside the gateway). Empty: no relay, so calls across strict NATs fail (client mode Full needs one).',
      }),
      TurnSecret: Type.String({
        default: '',
        description:
          "The TURN relay's shared secret (coturn's static-auth-secret with use-auth-secret): credentials are the TURN REST scheme, username `<expiry>:<crm id>`, password base64(HMAC-SHA1(secret, username)).",
      }),
      TurnTtlSeconds: Type.Integer({
        default: 3600,
        minimum: 60,
        maximum: 86_400,
        description: 'How long TURN credentials stay valid; a call started within that time keeps its allocation.',
      }),
      StunUrls: Type.Array(Type.String({ pattern: '^stuns?:[^\\s]+$' }), {
        default: [],
        description: 'Other STUN servers handed to callers (stun:host:port).',
      }),
      GatewayStun: Type.Boolean({
        default: false,
        description:
          "Hand callers the gateway's own STUN responder too: stun:<PublicOrigin host>:<PublicOrigin port>, the UDP port numbered like HTTPS.",
      }),
      IceTransportPolicy: Type.Union([Type.Literal('all'), Type.Literal('relay')], {
        default: 'all',
        description:
          "'relay': browsers use only the TURN relay (neither side learns the other's address); needs TurnUrls. 'all': direct paths first.",
      }),
    },
    { default: {}, additionalProperties: false },
  ),
}

export function checkCalls({ Calls }: GatewayConfig): string[] {
  const problems: string[] = []
  if (Calls.TurnUrls.length > 0 && Calls.TurnSecret.length < 16) {
    problems.push("Calls.TurnSecret: TURN relays need the relay's shared secret (at least 16 characters)")
  }
  if (Calls.IceTransportPolicy === 'relay' && Calls.TurnUrls.length === 0) {
    problems.push("Calls.IceTransportPolicy: 'relay' needs a TURN relay in Calls.TurnUrls")
  }
  return problems
}
