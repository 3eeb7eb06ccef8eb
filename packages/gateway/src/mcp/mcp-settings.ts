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
