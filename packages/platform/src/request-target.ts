import { isIPv6 } from 'node:net'
import { ApiError } from './errors.ts'

/**
 * The one strict reading of a request's Host and target that every part of a service uses (the
 * domain guard, the router's matching, the proxy's forwarding), so that no two parts can read one
 * request differently (issue 14: Host junk after a colon, two Host lines, `;` path parameters).
 */

/** A request's authority (RFC 9110 §7.2): a host name or address and an optional port. */
export interface Authority {
  /** Lower-case host name without a trailing dot, IPv4 address, or IPv6 address without brackets. */
  hostname: string
  /** Decimal port, '' when none was given. */
  port: string
  /** The canonical Host value, `hostname[:port]` with IPv6 in brackets: what modules receive. */
  host: string
}

/** A DNS-style name: labels of letters, digits, `-` and `_`, at most 253 characters, one optional trailing dot. */
const HOST_NAME = /^(?=.{1,254}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*\.?$/
const PORT = /^[0-9]{0,5}$/

/**
 * Parses a Host (or `:authority`, or X-Forwarded-Host) value strictly: `name[:port]`, `IPv4[:port]`
 * or `[IPv6][:port]` and nothing else; undefined for anything else (junk after the port, a second
 * colon, user info, a path, spaces). Case is folded and one trailing dot dropped.
 */
export function parseAuthority(value: string | undefined): Authority | undefined {
  if (value === undefined || value === '') return undefined
  const lower = value.toLowerCase()
  let hostname: string
  let rest: string
  const bracketed = lower.startsWith('[')
  if (bracketed) {
    const close = lower.indexOf(']')
    if (close === -1) return undefined
    hostname = lower.slice(1, close)
    if (!isIPv6(hostname)) return undefined
    rest = lower.slice(close + 1)
  } else {
    const colon = lower.indexOf(':')
    hostname = colon === -1 ? lower : lower.slice(0, colon)
    rest = colon === -1 ? '' : lower.slice(colon)
    if (!HOST_NAME.test(hostname)) return undefined
    if (hostname.endsWith('.')) hostname = hostname.slice(0, -1)
  }
  if (rest !== '' && !rest.startsWith(':')) return undefined
  const port = rest.slice(1)
  if (!PORT.test(port) || (port !== '' && Number(port) > 65535)) return undefined
  const name = bracketed ? `[${hostname}]` : hostname
  return { hostname, port, host: port === '' ? name : `${name}:${port}` }
}

/** What the request-line and headers of a request say about its host, as Node's HTTP/1 and HTTP/2 servers give them. */
export interface RawAuthorityInput {
  httpVersionMajor: number
  /** Header names and values in the order received (Node's `rawHeaders`). */
  rawHeaders: string[]
}

/**
 * The request's own Host: exactly one Host line on HTTP/1 (RFC 9112 §3.2 requires 400 for none or
 * several), and on HTTP/2 the `:authority`, which a `host` header may repeat but never contradict
 * (RFC 9113 §8.3.1). BadRequest otherwise; the value is not parsed here.
 */
export function requestHost({ httpVersionMajor, rawHeaders }: RawAuthorityInput): string {
  const hosts: string[] = []
  let authority: string | undefined
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length === 4 && name.toLowerCase() === 'host') hosts.push(rawHeaders[i + 1]!)
    else if (name === ':authority') authority = rawHeaders[i + 1]
  }
  if (hosts.length > 1) throw new ApiError('BadRequest', 'the request has more than one Host header')
  if (httpVersionMajor >= 2) {
    if (authority !== undefined && hosts.length === 1) {
      const fromHost = parseAuthority(hosts[0])
      const fromAuthority = parseAuthority(authority)
      if (fromHost === undefined || fromHost.host !== fromAuthority?.host) {
        throw new ApiError('BadRequest', 'the Host header differs from :authority')
      }
    }
    const host = authority ?? hosts[0]
    if (host === undefined) throw new ApiError('BadRequest', 'the request has no :authority or Host')
    return host
  }
  if (hosts.length === 0) throw new ApiError('BadRequest', 'the request has no Host header')
  return hosts[0]!
}

/** A request target in origin-form, read once for every part of a service. */
export interface RequestTarget {
  /**
   * The path as routes are matched: percent-decoded, each segment's `;` parameters removed (as
   * Tomcat, Jetty and Spring remove them), repeated slashes merged. Never used to forward.
   */
  path: string
}

// RFC 3986 pchar, plus what browsers leave unencoded in a path (WHATWG path percent-encode set): [ ] | ^
const RAW_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/%[\]|^]*$/
const PERCENT_ESCAPES = /%(?![0-9A-Fa-f]{2})/
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/

/**
 * Parses a request target strictly: origin-form only (a path, then an optional query), the path of
 * RFC 3986 path characters and well-formed percent-escapes of valid UTF-8, without NUL, backslash
 * or dot segments (also `..;` and encoded forms, which some servers resolve into another path).
 * Throws BadRequest naming the problem, never echoing the target.
 */
export function parseRequestTarget(url: string): RequestTarget {
  const query = url.indexOf('?')
  const raw = query === -1 ? url : url.slice(0, query)
  if (!raw.startsWith('/')) throw new ApiError('BadRequest', 'the request target must be a path starting with /')
  if (!RAW_PATH.test(raw)) throw new ApiError('BadRequest', 'the request path has characters that must be encoded')
  let path = raw
  if (raw.includes('%')) {
    try {
      if (PERCENT_ESCAPES.test(raw)) throw new URIError('bad escape')
      path = decodeURIComponent(raw)
    } catch {
      throw new ApiError('BadRequest', 'the request path is not valid percent-encoding of UTF-8')
    }
  }
  if (path.includes(';')) path = path.replace(/;[^/]*/g, '')
  if (DOT_SEGMENT.test(path) || path.includes('\\') || path.includes('\0')) {
    throw new ApiError('BadRequest', 'the request path must not contain dot segments, backslashes or NUL')
  }
  return { path: path.includes('//') ? path.replace(/\/{2,}/g, '/') : path }
}
