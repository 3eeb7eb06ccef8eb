import { createHash } from 'node:crypto'
import { errorCodes } from '@atrium/platform'
import type { FastifyReply } from 'fastify'

const STYLE = [
  'body{margin:0;min-height:100vh;display:grid;place-items:center;font:16px/1.5 system-ui,sans-serif;',
  'color:#1d2430;background:#f5f6f8}',
  'main{max-width:26rem;padding:2rem;text-align:center}',
  'button{font:inherit;padding:.6rem 1.8rem;border:0;border-radius:.4rem;color:#fff;background:#2457c5;cursor:pointer}',
].join('')

/**
 * Sends the link's token with the login audit's client fields as the web client collects them
 * (packages/web: sign-in/client-info.ts, and api/device.ts for the device GUID kept in localStorage
 * under `atrium.deviceGuid`; the page is on the same origin, so it reads the same GUID), then goes
 * to the return address. The token is read from the form, never written into the script. When the
 * call fails other than by an expired link, the form comes back so the person can press the button.
 */
const SCRIPT = `(() => {
  const form = document.getElementById('magic')
  const status = document.getElementById('status')
  const GUID = /^[A-Za-z0-9-]{8,64}$/
  function randomGuid() {
    const bytes = new Uint8Array(16)
    crypto.getRandomValues(bytes)
    bytes[6] = (bytes[6] & 0x0f) | 0x40
    bytes[8] = (bytes[8] & 0x3f) | 0x80
    const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
    return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-')
  }
  function deviceGuid() {
    try {
      const stored = localStorage.getItem('atrium.deviceGuid')
      if (stored && GUID.test(stored)) return stored
    } catch {}
    const fresh = randomGuid()
    try {
      localStorage.setItem('atrium.deviceGuid', fresh)
    } catch {}
    return fresh
  }
  function clientInfo() {
    const info = { deviceGuid: deviceGuid() }
    const width = screen.width || 0
    const height = screen.height || 0
    if (width > 0 && height > 0) info.screen = Math.round(width) + 'x' + Math.round(height)
    let timezone = ''
    try {
      timezone = Intl.DateTimeFormat().resolvedOptions().timeZone || ''
    } catch {}
    if (timezone && timezone.length <= 64) info.timezone = timezone
    const language = navigator.language || ''
    if (language && language.length <= 35) info.language = language
    return info
  }
  function offerButton(message) {
    status.textContent = message
    form.hidden = false
  }
  form.hidden = true
  status.textContent = 'Signing you in\\u2026'
  fetch(form.action, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ token: form.elements.token.value, client: clientInfo() }),
  })
    .then(async (response) => {
      const body = await response.json()
      if (response.ok) return location.replace(body.result.returnTo)
      if (body.error && body.error.code === ${errorCodes.ChallengeExpired.code}) {
        status.textContent = body.error.message
        document.getElementById('back').hidden = false
        return
      }
      offerButton((body.error && body.error.message) || 'Signing in failed.')
    })
    .catch(() => offerButton('The server could not be reached; press the button to try again.'))
})()`

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`
}

/**
 * Only the page's own inline script and style run; it may call its own origin and post its form
 * there, and no other site may frame it.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!)
}

function page(title: string, body: string, script = ''): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title><style>${STYLE}</style></head>`,
    `<body><main>${body}</main>${script && `<script>${script}</script>`}</body>`,
    '</html>',
  ].join('\n')
}

/** The way back when a link no longer works: the site's front page leads to sign-in. */
const BACK_LINK = '<a href="/">Back to sign-in</a>'

/**
 * The page a magic link opens. Opening it signs nobody in (mail scanners and prefetchers open
 * links too); its script posts the token, or without JavaScript the person presses the button.
 * `action` is the POST endpoint's path.
 */
export function magicLinkPage(token: string, action: string): string {
  const form = [
    `<form id="magic" method="post" action="${escapeHtml(action)}">`,
    `<input type="hidden" name="token" value="${escapeHtml(token)}">`,
    '<button type="submit">Sign in</button>',
    '</form>',
  ].join('')
  return page(
    'Sign in',
    `<h1>Sign in</h1><p id="status">Press the button to sign in.</p>${form}<p id="back" hidden>${BACK_LINK}</p>`,
    SCRIPT,
  )
}

/** What a browser sees when a sign-in through another site (OAuth, a partner) did not complete. */
export function signInFailedPage(message: string): string {
  return page(
    'Sign-in did not complete',
    `<h1>Sign-in did not complete</h1><p>${escapeHtml(message)}</p><p>${BACK_LINK}</p>`,
  )
}

/** What a form post of an expired or used link answers: a page, not the JSON error envelope. */
export function expiredLinkPage(): string {
  return page(
    'Sign-in link expired',
    `<h1>This sign-in link expired or was already used</h1><p>Ask for a new one on the sign-in page.</p><p>${BACK_LINK}</p>`,
  )
}

/**
 * Headers of both pages: never cached (the URL holds a secret), Referer reduced to the origin
 * (`strict-origin`: under `no-referrer` a browser sends `Origin: null` with the form post, which the
 * login-CSRF check refuses), the CSP above, and no framing.
 */
export function sendPage(reply: FastifyReply, html: string): FastifyReply {
  return reply
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'strict-origin')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(html)
}
