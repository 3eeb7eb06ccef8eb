import { ApiError } from '@atrium/platform'

/** Longest accepted return address, in characters. */
export const MAX_RETURN_ADDRESS_LENGTH = 2048

// RFC 3986 path, query and fragment characters, plus `%` for escapes: anything else (spaces,
// backslashes, control characters, raw non-ASCII) is refused before any decoding.
const ALLOWED = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?#%]*$/
const DECODE_LAYERS = 4
// What encodeURIComponent escapes that a path segment keeps as it is (RFC 3986 pchar).
const SEGMENT_KEEPS = /%(24|26|2B|2C|3A|3B|3D|40)/g

function refuse(reason: string): never {
  throw new ApiError('InvalidReturnAddress', `returnTo ${reason}; give a path on this site such as /chat/`)
}

function checkLayer(text: string): void {
  if (!text.startsWith('/')) refuse('must start with /')
  // `//host` and `/\host` are network-path references: browsers go to another host.
  if (text.startsWith('//') || text.startsWith('/\\')) refuse('must not name another host')
  // Browsers read a backslash as a slash, so no spelling of one is accepted anywhere.
  if (text.includes('\\')) refuse('must not contain backslashes')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text)) refuse('must not contain control characters')
  if (/(?:^|[^a-z])(?:javascript|vbscript|data):/i.test(text)) refuse('must not contain a script scheme')
}

/** Decodes percent-escapes until nothing changes, checking every layer on the way. */
function decodeFully(text: string): string {
  let layer = text
  for (let depth = 0; ; depth++) {
    checkLayer(layer)
    let decoded: string
    try {
      decoded = decodeURIComponent(layer)
    } catch {
      refuse('has a malformed percent escape')
    }
    if (decoded === layer) return layer
    if (depth === DECODE_LAYERS) refuse('is encoded too many times')
    layer = decoded
  }
}

/** RFC 3986 §5.2.4: `.` and `..` segments resolved, as a browser resolves them; never above the root. */
function removeDotSegments(path: string): string {
  const output: string[] = []
  const segments = path.split('/').slice(1)
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1
    if (segment === '.' || segment === '..') {
      if (segment === '..' && output.length > 0) output.pop()
      if (last) output.push('')
    } else {
      output.push(segment)
    }
  }
  return `/${output.join('/')}`
}

/**
 * Brings a caller-supplied return address to its one canonical form, judges that form, and answers
 * it: the path decoded until stable, dot segments resolved, each segment escaped again; the query
 * and fragment as given. Only paths on this site are accepted: absolute URLs, `//host`, `/\host`,
 * backslashes, control characters and script schemes are refused in every decoding of the address
 * (`/%2e%2e/%2f%2fhost` too, whose canonical path is `//host`). The canonical form is what every
 * sign-in entry stores and answers, and validating it again answers it unchanged. Redirects are
 * built from the configured PublicOrigin and this path, never from a host the caller chose
 * (ARCHITECTURE.md, "Security defaults").
 */
export function validateReturnAddress(input: string): string {
  if (input.length === 0) return '/'
  if (input.length > MAX_RETURN_ADDRESS_LENGTH) refuse('is too long')
  if (!ALLOWED.test(input)) refuse('contains characters that are not allowed in a path')
  decodeFully(input)
  const split = input.search(/[?#]/)
  const rawPath = split === -1 ? input : input.slice(0, split)
  const rest = split === -1 ? '' : input.slice(split)
  const path = removeDotSegments(decodeFully(rawPath))
  if (path.startsWith('//')) refuse('must not name another host')
  const canonical = path
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(SEGMENT_KEEPS, (kept) => decodeURIComponent(kept)))
    .join('/')
  if (canonical.length + rest.length > MAX_RETURN_ADDRESS_LENGTH) refuse('is too long')
  return canonical + rest
}

/** The absolute URL to send a browser to: the configured public origin and a validated path. */
export function returnUrl(publicOrigin: string, path: string): string {
  return new URL(validateReturnAddress(path), publicOrigin).href
}
