import { commonSettings, loadConfig, type Settings } from '@atrium/platform'
import { Type } from 'typebox'

/** Every gateway setting; docs/configuration.md is generated from this declaration. */
export const gatewaySettings = Type.Object(
  {
    ...commonSettings({ host: 'localhost', port: 8080 }),
    GatewayDB: Type.String({
      default: 'sqlite:data/gateway.db',
      description: 'Gateway database: `sqlite:<path>` (embedded default) or `postgres://…`.',
    }),
    LocalFileStoragePath: Type.String({
      default: 'data/files',
      description: 'Directory for attachment bytes on local disk; recommended for single-proxy deployments.',
    }),
    PushSending: Type.Boolean({
      default: true,
      description: 'Send Web Push and webhooks from this node; enable on exactly one gateway node.',
    }),
    WebPush: Type.Object(
      {
        Enabled: Type.Boolean({ default: false, description: 'Offer browser Web Push subscriptions.' }),
        PublicKey: Type.String({ default: '', description: 'VAPID public key (base64url), required when enabled.' }),
        PrivateKey: Type.String({ default: '', description: 'VAPID private key (base64url), required when enabled.' }),
        Subject: Type.String({
          default: '',
          description: 'VAPID subject, a `mailto:` or `https:` URL, required when enabled.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    Modules: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9-]*$' }), Type.String({ format: 'uri' }), {
      default: {},
      description: 'Internal base URL of each module, by module name, e.g. `{"chat": "http://127.0.0.1:8081"}`.',
    }),
  },
  { additionalProperties: false },
)

export type GatewayConfig = Settings<typeof gatewaySettings>

function checkWebPush(config: GatewayConfig): string[] {
  if (!config.WebPush.Enabled) return []
  const problems: string[] = []
  if (!config.WebPush.PublicKey) problems.push('WebPush.PublicKey: required when WebPush.Enabled is true')
  if (!config.WebPush.PrivateKey) problems.push('WebPush.PrivateKey: required when WebPush.Enabled is true')
  if (!/^(mailto:|https:\/\/)/.test(config.WebPush.Subject)) {
    problems.push('WebPush.Subject: must be a mailto: or https: URL when WebPush.Enabled is true')
  }
  return problems
}

/** Loads and validates the gateway's settings from a config-file section and the environment. */
export function loadGatewayConfig(file: unknown, env: Record<string, string | undefined>): GatewayConfig {
  return loadConfig(gatewaySettings, { source: 'gateway', file, env, refine: checkWebPush })
}
