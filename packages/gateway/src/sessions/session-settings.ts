import { Type } from 'typebox'
import type { GatewayConfig } from '../config.ts'

/** Sessions and their cookie (docs/gateway.md, "Sessions"); spread into the gateway's settings. */
export const sessionSettings = {
  Sessions: Type.Object(
    {
      CookieName: Type.String({
        default: 'atrium_session',
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'Name of the session cookie (HttpOnly, SameSite=Lax; Secure outside development).',
      }),
      CookieDomain: Type.String({
        default: '',
        description:
          'Domain of the session cookie, e.g. `example.com`: one sign-in then holds on p1, p2, p3 and the project domain. Only for gateways that share one gateway database, since a gateway that does not know a session clears the shared cookie (docs/operations.md). Empty (the default): the cookie belongs to the host of PublicOrigin alone.',
      }),
      IdleSeconds: Type.Integer({
        default: 604_800,
        minimum: 60,
        description: 'A session unused this long ends (exactly at last use + IdleSeconds).',
      }),
      AbsoluteSeconds: Type.Integer({
        default: 2_592_000,
        minimum: 60,
        description: 'A session ends this long after sign-in, however active.',
      }),
      MaxPerUser: Type.Integer({
        default: 10,
        minimum: 1,
        maximum: 1000,
        description: 'Sessions one user (or one app, through AppLogin) may hold; one more sign-in ends the oldest.',
      }),
      SweepSeconds: Type.Integer({
        default: 300,
        minimum: 1,
        description: 'Interval of the sweep that deletes expired sessions, sign-in challenges and unfinished uploads.',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
}

// Labels of letters, digits and inner hyphens, joined by dots; the last one not all digits (no IP address).
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i
const NUMERIC_LABEL = /(^|\.)\d+$/

/**
 * What is wrong with `domain` as a setting that must hold the host of PublicOrigin (a cookie's
 * Domain, a WebAuthn relying-party id): not a domain name, or neither that host nor a domain it
 * ends with; empty when nothing is.
 */
export function domainOfOriginProblems(setting: string, domain: string, publicOrigin: string): string[] {
  if (!HOSTNAME.test(domain) || NUMERIC_LABEL.test(domain)) {
    return [
      `${setting}: ${JSON.stringify(domain)} is not a domain name like example.com (no scheme, port, path or leading dot)`,
    ]
  }
  const host = new URL(publicOrigin).hostname.toLowerCase()
  const base = domain.toLowerCase()
  if (host !== base && !host.endsWith(`.${base}`)) {
    return [`${setting}: the host of PublicOrigin (${host}) must be ${base} or end with .${base}`]
  }
  return []
}

/**
 * Sessions.CookieDomain is a host name (no scheme, port or leading dot), and the gateway's own host
 * lies within it: a browser refuses a cookie whose Domain does not cover the host that set it, or
 * a `__Host-` cookie with any Domain (RFC 6265bis, "Cookie Name Prefixes").
 */
export function checkSessions({ Sessions, PublicOrigin }: GatewayConfig): string[] {
  const domain = Sessions.CookieDomain
  if (domain === '') return []
  if (Sessions.CookieName.toLowerCase().startsWith('__host-')) {
    return [
      'Sessions.CookieDomain: browsers refuse a __Host- cookie with a Domain; name the cookie without that prefix, or leave CookieDomain empty',
    ]
  }
  return domainOfOriginProblems('Sessions.CookieDomain', domain, PublicOrigin)
}
