import { ApiError } from '@atrium/platform'
import type { FederationPartner } from './federation.repository.ts'
import { BUILT_IN_IDS } from './providers.ts'

/** A partner's id: 2 to 32 lower-case letters, digits and -, starting with a letter. */
const SLUG = /^[a-z][a-z0-9-]{1,31}$/

/** What an operator gives to add a partner (`atrium partner add`, the operator panel); omitted fields are empty. */
export interface PartnerFields {
  slug: string
  name: string
  issuer: string
  clientId: string
  clientSecret: string
  logo?: string
  /** Space- or comma-separated; `openid email profile` when omitted. */
  scopes?: string
}

function refuse(message: string): never {
  throw new ApiError('InvalidRequest', message)
}

/** An https URL, or http on this machine (a local provider). */
function checkedUrl(text: string, what: string): string {
  const url = URL.parse(text)
  const loopback = url?.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
  if (!url || (url.protocol !== 'https:' && !loopback) || url.username || url.password) {
    refuse(`${what} must be an https URL, got ${JSON.stringify(text.slice(0, 300))}`)
  }
  return url.href.replace(/\/$/, text.endsWith('/') ? '/' : '')
}

/** A partner's scopes, space-separated, checked to include `openid`; `openid email profile` when omitted. */
export function partnerScopes(text: string | undefined): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(text ?? '')) refuse('scopes must not contain control characters')
  const scopes = [...new Set((text ?? 'openid email profile').split(/[\s,]+/).filter(Boolean))]
  if (!scopes.includes('openid')) refuse('scopes must include openid')
  return scopes.join(' ')
}

/**
 * A partner to add, validated: its id, a name of at most 64 characters, an https issuer (http on
 * this machine), client id and secret, an optional https logo and scopes with `openid`. Throws
 * InvalidRequest saying what is wrong.
 */
export function checkedPartner(fields: PartnerFields): Omit<FederationPartner, 'id' | 'created'> {
  const slug = fields.slug.trim()
  if (!SLUG.test(slug)) {
    refuse(
      `id must be 2 to 32 lower-case letters, digits and -, starting with a letter; got ${JSON.stringify(slug.slice(0, 40))}`,
    )
  }
  if ((BUILT_IN_IDS as readonly string[]).includes(slug)) {
    refuse(`${slug} is a built-in sign-in method; give the partner another id`)
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(Object.values(fields).join(''))) refuse('fields must not contain control characters')
  const name = fields.name.trim()
  if (!name) refuse('name is required')
  if (name.length > 64) refuse('name must be at most 64 characters')
  const required = (value: string, what: string) => value.trim() || refuse(`${what} is required`)
  const logo = fields.logo?.trim() ?? ''
  return {
    slug,
    name,
    logo_url: logo === '' ? '' : checkedUrl(logo, 'logo'),
    issuer: checkedUrl(required(fields.issuer, 'issuer'), 'issuer'),
    client_id: required(fields.clientId, 'client id'),
    client_secret: required(fields.clientSecret, 'client secret'),
    scopes: partnerScopes(fields.scopes),
  }
}
