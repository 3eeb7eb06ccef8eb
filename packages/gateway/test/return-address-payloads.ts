/**
 * Return addresses that could send a browser off the site: absolute URLs, `//host`, `/\\host`,
 * encoded and double-encoded forms, mixed case, userinfo tricks, script schemes, control
 * characters and unicode look-alikes. Every parameter that takes a return address is tested with
 * all of them.
 */
export const ATTACKS = [
  'https://evil.example/',
  'http://evil.example',
  'HTTPS://evil.example',
  'evil.example',
  '//evil.example',
  '///evil.example',
  '////evil.example/path',
  '/\\evil.example',
  '\\\\evil.example',
  '/\\/evil.example',
  '/path\\..\\evil',
  '/%2f%2fevil.example',
  '/%2F%2Fevil.example',
  '%2f%2fevil.example',
  '/%5cevil.example',
  '/%5Cevil.example',
  '/%252f%252fevil.example',
  '/%25252f%25252fevil.example',
  '/%255cevil.example',
  '/..//evil.example',
  '/./..//evil.example',
  '/x/../..//evil.example',
  '/%2e%2e//evil.example',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  '/javascript:alert(1)',
  '/%6Aavascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  ' /chat',
  '/chat\u0000',
  '/\tevil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/%09/evil.example',
  '/%0a/evil.example',
  '/%0d%0aSet-Cookie:x=1',
  '/%00',
  '/chat\u2028',
  '/\u3002evil.example',
  '/ʼevil',
  '/%E2%80%A8',
  '/%',
  '/%zz',
  '/%e0%a4%a',
  `/${'a'.repeat(2048)}`,
  '/\u007f',
  '?next=//evil.example',
  '#//evil.example',
  'mailto:a@evil.example',
  'https://atrium.example@evil.example/',
  'https://atrium.example:443@evil.example',
  '//atrium.example@evil.example',
  '/%2F%2Fatrium.example@evil.example',
  '/%252F%252Fatrium.example%2540evil.example',
  '@evil.example',
  'https:evil.example',
  'http:/evil.example',
  'https:\\\\evil.example',
  '\\/evil.example',
  '/%5C%5Cevil.example',
  '/%255C%255Cevil.example',
  '/\u0000//evil.example',
  '/%00//evil.example',
  '\t//evil.example',
  '/%0D//evil.example',
  ' javascript:alert(1)',
  '/%4A%41%56%41%53%43%52%49%50%54:alert(1)',
  'java%0Ascript:alert(1)',
  // Dot segments that only resolve to `//host` once an encoded slash or dot is decoded.
  '/%2e%2e/%2f%2fevil.example',
  '/../%2f%2fevil.example',
  '/.%2e/%2f%2fevil.example',
  '/%2e%2e%2f%2f%2fevil.example',
  '/x/%2e%2e/%2e%2e/%2fevil.example',
  '/%2e%2e/%252f%252fevil.example',
  '/%252e%252e/%252f%252fevil.example',
]

/** Paths that only look like another host or a redirect: they stay on the gateway's own origin. */
export const LOOKALIKES = [
  '/@evil.example',
  '/%40evil.example',
  '/atrium.example@evil.example/x',
  '/chat?next=https://evil.example',
  '/chat?next=//evil.example',
  '/a/./b/../c',
  '/%2e%2e/chat',
  '/chat/%2e%2e/%40me',
]

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const UNSAFE_CHARACTERS = /[\\\s\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/**
 * The test's own judgement of a payload, made without the gateway's code: true when every
 * percent-decoding of it is a plain path of this site (no second slash or backslash after the
 * first, no whitespace, control or non-ASCII characters, no script scheme) and the browser would
 * resolve each of them on `origin` to a path that does not itself start with `//`.
 */
export function staysOnSite(payload: string, origin: string): boolean {
  if (/[^\x21-\x7e]/.test(payload)) return false
  let layer = payload
  for (let depth = 0; depth < 6; depth++) {
    if (!layer.startsWith('/') || layer.startsWith('//') || layer.startsWith('/\\')) return false
    if (UNSAFE_CHARACTERS.test(layer) || /(?:javascript|vbscript|data):/i.test(layer)) return false
    if (new URL(layer, origin).pathname.startsWith('//')) return false
    let next: string
    try {
      next = decodeURIComponent(layer)
    } catch {
      return false
    }
    if (next === layer) break
    layer = next
  }
  if (payload.length > 2048) return false
  const url = new URL(payload, origin)
  return url.origin === origin && !url.pathname.startsWith('//')
}

/**
 * Where the test expects a payload that stays on site to land, read without the gateway's code:
 * its path decoded until stable, with dot segments resolved as the browser resolves them, and its
 * query and fragment as given.
 */
export function expectedLanding(payload: string, origin: string): { path: string; rest: string } {
  const split = payload.search(/[?#]/)
  let path = split === -1 ? payload : payload.slice(0, split)
  while (decodeURIComponent(path) !== path) path = decodeURIComponent(path)
  return { path: decodeURIComponent(new URL(path, origin).pathname), rest: split === -1 ? '' : payload.slice(split) }
}
