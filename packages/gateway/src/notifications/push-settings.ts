import { createECDH } from 'node:crypto'
import { Type } from 'typebox'
import type { GatewayConfig } from '../config.ts'

/** Web Push settings (docs/events.md); spread into the gateway's settings. */
export const pushSettings = {
  WebPush: Type.Object(
    {
      Enabled: Type.Boolean({ default: false, description: 'Offer browser Web Push subscriptions.' }),
      PublicKey: Type.String({ default: '', description: 'VAPID public key (base64url), required when enabled.' }),
      PrivateKey: Type.String({ default: '', description: 'VAPID private key (base64url), required when enabled.' }),
      Subject: Type.String({
        default: '',
        description: 'VAPID subject, a `mailto:` or `https:` URL, required when enabled.',
      }),
      MaxSubscriptionsPerUser: Type.Integer({
        default: 10,
        minimum: 1,
        maximum: 100,
        description: 'Browsers one user may subscribe; one more subscription removes their oldest.',
      }),
      TtlSeconds: Type.Integer({
        default: 86_400,
        minimum: 0,
        maximum: 2_419_200,
        description: 'How long a push service keeps a notification for a browser that is offline (TTL header).',
      }),
      MaxAttempts: Type.Integer({
        default: 3,
        minimum: 1,
        maximum: 10,
        description: 'Tries per notification and browser when the push service fails (5xx, 429, no answer).',
      }),
      RetryMs: Type.Integer({
        default: 2_000,
        minimum: 10,
        description: 'Pause before the second try; it doubles for each further one (or Retry-After, if longer).',
      }),
      TimeoutMs: Type.Integer({
        default: 10_000,
        minimum: 100,
        description: 'Time one request to a push service may take.',
      }),
      MaxQueued: Type.Integer({
        default: 10_000,
        minimum: 1,
        description: 'Notifications waiting to be sent; more are dropped and logged (delivery is best effort).',
      }),
      RefreshSeconds: Type.Integer({
        default: 30,
        minimum: 1,
        description:
          'Interval at which the sending node re-reads which users have subscriptions (other nodes add them).',
      }),
      AllowPrivateEndpoints: Type.Boolean({
        default: false,
        description:
          'Accept push endpoints over plain http or on loopback and private addresses (a local push service in tests); never in production.',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
}

/** Why a VAPID key pair is unusable: base64url P-256 keys (65-byte public, 32-byte private) of one pair. */
function vapidKeyProblems(publicKey: string, privateKey: string): string[] {
  const base64url = /^[A-Za-z0-9_-]+$/
  const pub = base64url.test(publicKey) ? Buffer.from(publicKey, 'base64url') : Buffer.alloc(0)
  const priv = base64url.test(privateKey) ? Buffer.from(privateKey, 'base64url') : Buffer.alloc(0)
  const problems: string[] = []
  if (pub.length !== 65 || pub[0] !== 4) problems.push('WebPush.PublicKey: not a base64url P-256 public key (65 bytes)')
  if (priv.length !== 32) problems.push('WebPush.PrivateKey: not a base64url P-256 private key (32 bytes)')
  if (problems.length > 0) return problems
  try {
    const ecdh = createECDH('prime256v1')
    ecdh.setPrivateKey(priv)
    if (ecdh.getPublicKey().equals(pub)) return []
  } catch {
    // an out-of-range private key
  }
  return ['WebPush.PrivateKey: does not belong to WebPush.PublicKey (generate a pair with `atrium webpush keys`)']
}

export function checkWebPush(config: GatewayConfig): string[] {
  if (!config.WebPush.Enabled) return []
  const problems: string[] = []
  if (!config.WebPush.PublicKey) problems.push('WebPush.PublicKey: required when WebPush.Enabled is true')
  if (!config.WebPush.PrivateKey) problems.push('WebPush.PrivateKey: required when WebPush.Enabled is true')
  if (config.WebPush.PublicKey && config.WebPush.PrivateKey) {
    problems.push(...vapidKeyProblems(config.WebPush.PublicKey, config.WebPush.PrivateKey))
  }
  if (!/^(mailto:|https:\/\/)/.test(config.WebPush.Subject)) {
    problems.push('WebPush.Subject: must be a mailto: or https: URL when WebPush.Enabled is true')
  }
  return problems
}
