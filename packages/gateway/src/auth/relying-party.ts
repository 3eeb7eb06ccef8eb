import type { GatewayConfig } from '../config.ts'
import { domainOfOriginProblems } from '../sessions/session-settings.ts'

/**
 * The WebAuthn relying-party id of passkeys and security keys: the host of PublicOrigin, or
 * WebAuthn.RpId when set to a domain that host ends with (`example.com` for
 * `https://p1.example.com`). Keys are bound to it, so with the project domain as the id a key made
 * on p1 signs in on p2. Each gateway still accepts ceremonies only from its own PublicOrigin.
 */
export function relyingPartyId({ PublicOrigin, WebAuthn }: Pick<GatewayConfig, 'PublicOrigin' | 'WebAuthn'>): string {
  return WebAuthn.RpId.toLowerCase() || new URL(PublicOrigin).hostname
}

/** WebAuthn.RpId, when set, is a domain name that the host of PublicOrigin is or ends with. */
export function checkWebAuthn({ WebAuthn, PublicOrigin }: GatewayConfig): string[] {
  if (WebAuthn.RpId === '') return []
  return domainOfOriginProblems('WebAuthn.RpId', WebAuthn.RpId, PublicOrigin)
}
