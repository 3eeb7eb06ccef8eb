import { ApiError } from '@atrium/platform'

/** Longest accepted return address, in characters. */
export const MAX_RETURN_ADDRESS_LENGTH = 2048

// RFC 3986 path, query and fragment characters, plus `%` for escapes: anything else (spaces,
// backslashes, control characters, raw non-ASCII) is refused before any decoding.
const ALLOWED = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?#%]*$/
const BASE = 'http://return-address.invalid'
const DECODE_LAYERS = 4

function refuse(reason: string): never {
  throw new ApiError('InvalidReturnAddress', `returnTo ${reason}; give a path on this site such as /chat/`)
}

function checkLayer(text: string): void {
  if (!text.startsWith('/')) refuse('must start with /')
  // `//host` and `/\host` are network-path references: browsers go to another host.
  if (text.startsWith('//') || text.startsWith('/\\')) refuse('must not name another host')
  if (text.includes('\\')) refuse('must not contain backslashes')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text)) refuse('must not contain control characters')
  if (/(?:^|[^a-z])(?:javascript|vbscript|data):/i.test(text)) refuse('must not contain a script scheme')
}

/**
 * Validates a caller-supplied return address and answers the same-site path to use (path, query
 * and fragment, normalised). Only paths are accepted: absolute URLs, `//host`, `/\host`,
 * backslashes, control characters and script schemes are refused, also when percent-encoded once
 * or several times. Redirects are then built from the configured PublicOrigin and this path,
 * never from a host the caller chose (ARCHITECTURE.md, "Security defaults").
 */
export function validateReturnAddress(input: string): string {
  if (input.length === 0) return '/'
  if (input.length > MAX_RETURN_ADDRESS_LENGTH) refuse('is too long')
  if (!ALLOWED.test(input)) refuse('contains characters that are not allowed in a path')
  let layer = input
  for (let depth = 0; depth <= DECODE_LAYERS; depth++) {
    checkLayer(layer)
    let decoded: string
    try {
      decoded = decodeURIComponent(layer)
    } catch {
      refuse('has a malformed percent escape')
    }
    if (decoded === layer) break
    if (depth === DECODE_LAYERS) refuse('is encoded too many times')
    layer = decoded
  }
  const url = new URL(input, BASE)
  if (url.origin !== BASE) refuse('must not name another host')
  const path = url.pathname + url.search + url.hash
  // Dot segments can turn `/..//host` into `//host`; the normalised form is checked again.
  checkLayer(path)
  return path
}

/** The absolute URL to send a browser to: the configured public origin and a validated path. */
export function returnUrl(publicOrigin: string, path: string): string {
  return new URL(validateReturnAddress(path), publicOrigin).href
}
