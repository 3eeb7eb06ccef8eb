import { createHash } from 'node:crypto'
import type { GatewayConfig } from '../config.ts'
import type { Frontend } from './frontends.ts'

/** The mount of the chat client (packages/web builds it for this path only), where calls run. */
export const CHAT_CLIENT_MOUNT = '/chat/'

/** What the policy of a frontend depends on: a slice of the gateway's settings. */
export interface FrontendPolicySettings {
  publicOrigin: string
  /** True when browsers reach the gateway over HTTPS: TLS of its own or an https PublicOrigin. */
  https: boolean
  frameAncestors: Record<string, string[]>
  contentSecurityPolicy: Record<string, string>
}

/** The settings slice of the frontend policies. */
export function frontendPolicySettings(config: GatewayConfig): FrontendPolicySettings {
  return {
    publicOrigin: config.PublicOrigin,
    https: config.Tls.CertFile !== '' || config.PublicOrigin.startsWith('https:'),
    frameAncestors: config.Static.FrameAncestors,
    contentSecurityPolicy: config.Static.ContentSecurityPolicy,
  }
}

// Powerful features a frontend may use only when its policy names it (Permissions-Policy, W3C).
const CALL_FEATURES = ['camera', 'microphone', 'display-capture']
const OTHER_FEATURES = ['geolocation', 'payment', 'usb']

// A year, the value HSTS preload lists ask for; no includeSubDomains, since other hosts of the
// domain are not this gateway's to vouch for.
const HSTS = 'max-age=31536000'

/**
 * The origins of the client's address probes (docs/web-client.md, "Several gateways: p1, p2, p3"):
 * a gateway reached as `https://pN.<domain>` serves a client that may probe p1, p2 and p3 of the
 * domain; any other PublicOrigin has none.
 */
export function addressOrigins(publicOrigin: string): string[] {
  const { protocol, hostname } = new URL(publicOrigin)
  const domain = /^p[1-3]\.(.+)$/.exec(hostname)?.[1]
  return protocol === 'https:' && domain ? ['p1', 'p2', 'p3'].map((name) => `https://${name}.${domain}`) : []
}

/**
 * The chat client's policy: its own scripts and styles only (no inline code, no eval), API calls,
 * the event stream and uploads to this origin (and the address probes), images from this origin,
 * `data:` (the page icon), `blob:` (a guest's files) and https (a sign-in partner's logo), media
 * from this origin and `blob:`.
 */
function chatClientPolicy(settings: FrontendPolicySettings): string[] {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob: https:",
    "media-src 'self' blob:",
    ["connect-src 'self'", ...addressOrigins(settings.publicOrigin)].join(' '),
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ]
}

/** `'sha256-…'` of each inline `<script>` of the frontend's HTML files, as a browser hashes it. */
function inlineScriptHashes(frontend: Frontend): string[] {
  const hashes = new Set<string>()
  for (const [path, file] of frontend.files) {
    if (!path.endsWith('.html') && !path.endsWith('.htm')) continue
    const html = file.identity.body.toString('utf8')
    for (const [, attributes, code] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)) {
      if (/\bsrc\s*=/i.test(attributes!) || code === '') continue
      // The HTML parser turns CR LF and lone CR into LF before the script's text is hashed.
      const text = code!.replace(/\r\n?/g, '\n')
      hashes.add(`'sha256-${createHash('sha256').update(text).digest('base64')}'`)
    }
  }
  return [...hashes]
}

/**
 * The default policy of an operator's frontend: its own files, plus its inline scripts by their
 * hashes (so a build that bootstraps inline keeps working, while injected script does not run),
 * inline styles, images and fonts also as `data:`.
 */
function operatorAppPolicy(frontend: Frontend): string[] {
  return [
    "default-src 'self'",
    ["script-src 'self'", ...inlineScriptHashes(frontend)].join(' '),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "media-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ]
}

/** frame-ancestors: the origins the settings name for the mount, else none at all. */
function frameAncestors(mount: string, settings: FrontendPolicySettings): string {
  const origins = settings.frameAncestors[mount] ?? []
  return `frame-ancestors ${origins.length > 0 ? origins.join(' ') : "'none'"}`
}

/** The Content-Security-Policy of a frontend: the operator's own for its mount, else the default. */
export function contentSecurityPolicy(frontend: Frontend, settings: FrontendPolicySettings): string {
  const own = settings.contentSecurityPolicy[frontend.mount]?.trim().replace(/;\s*$/, '')
  const directives = own
    ? [own]
    : frontend.mount === CHAT_CLIENT_MOUNT
      ? chatClientPolicy(settings)
      : operatorAppPolicy(frontend)
  if (!own || !/(^|;)\s*frame-ancestors\b/i.test(own)) directives.push(frameAncestors(frontend.mount, settings))
  return directives.join('; ')
}

/**
 * The security headers of every file a frontend serves (issue 40, item 4): its CSP, a Referrer
 * Policy, a Permissions-Policy that allows the call features only to the chat client, and HSTS
 * under HTTPS.
 */
export function frontendHeaders(frontend: Frontend, settings: FrontendPolicySettings): Record<string, string> {
  const chatClient = frontend.mount === CHAT_CLIENT_MOUNT
  const features = [
    ...CALL_FEATURES.map((feature) => `${feature}=${chatClient ? '(self)' : '()'}`),
    ...OTHER_FEATURES.map((feature) => `${feature}=()`),
  ]
  const headers: Record<string, string> = {
    'content-security-policy': contentSecurityPolicy(frontend, settings),
    // The client's paths name chats and people: none of it leaves the origin. An operator's app
    // keeps the browsers' default, which third-party services checking the Referer origin expect.
    'referrer-policy': chatClient ? 'same-origin' : 'strict-origin-when-cross-origin',
    'permissions-policy': features.join(', '),
    'x-content-type-options': 'nosniff',
  }
  if (settings.https) headers['strict-transport-security'] = HSTS
  return headers
}
