import { Type } from 'typebox'

/** Settings of the MCP endpoint (docs/mcp.md); spread into the gateway's settings. */
export const mcpSettings = {
  Mcp: Type.Object(
    {
      Enabled: Type.Boolean({
        default: true,
        description:
          'Answer MCP (JSON-RPC 2.0, Streamable HTTP) at /auth/v1/mcp. Tools still need grants (`atrium mcp allow`); without any, no caller sees a tool.',
      }),
      MaxBodyBytes: Type.Integer({
        default: 262_144,
        minimum: 1024,
        maximum: 16_777_216,
        description: 'Largest JSON-RPC request body; a larger one is answered 413 with a JSON-RPC error.',
      }),
      MaxAnswerBytes: Type.Integer({
        default: 1_048_576,
        minimum: 1024,
        maximum: 67_108_864,
        description: 'Largest module answer a tool reads; a larger one makes the tool fail (BadGateway).',
      }),
      AllowedOrigins: Type.Array(Type.String(), {
        default: [],
        description:
          'Origins (scheme://host[:port]) besides PublicOrigin whose browser pages may call /auth/v1/mcp; a request with any other Origin header is refused (403) whatever its credentials. Requests without Origin (assistants, servers) pass.',
      }),
      AuditRetentionDays: Type.Integer({
        default: 90,
        minimum: 1,
        maximum: 3650,
        description:
          'Days the audit of tool calls is kept; older rows go in the periodic sweep (Sessions.SweepSeconds), as do wallet_send records older than 7 days.',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
}

/** Each of Mcp.AllowedOrigins is an origin exactly as browsers send it in the Origin header. */
export function checkMcp({ Mcp }: { Mcp: { AllowedOrigins: string[] } }): string[] {
  return Mcp.AllowedOrigins.filter((origin) => {
    try {
      const url = new URL(origin)
      return !['http:', 'https:'].includes(url.protocol) || url.origin !== origin
    } catch {
      return true
    }
  }).map((origin) => `Mcp.AllowedOrigins: ${JSON.stringify(origin)} is not an origin like https://app.example.com`)
}
