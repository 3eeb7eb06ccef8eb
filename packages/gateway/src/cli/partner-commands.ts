import { BUILT_IN_IDS } from '../federation/providers.ts'
import { type Command, CommandFailed, formatTable, formatTime, stringOption, UsageError } from './command.ts'

const SLUG = /^[a-z][a-z0-9-]{1,31}$/

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = stringOption(values, name)?.trim()
  if (!value) throw new UsageError(`--${name} is required`)
  return value
}

/** An https URL, or http on this machine (a local provider). */
function checkedUrl(text: string, what: string): string {
  const url = URL.parse(text)
  const loopback = url?.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
  if (!url || (url.protocol !== 'https:' && !loopback) || url.username || url.password) {
    throw new UsageError(`${what} must be an https URL, got ${JSON.stringify(text)}`)
  }
  return url.href.replace(/\/$/, text.endsWith('/') ? '/' : '')
}

const addPartner: Command = {
  name: 'partner add',
  usage:
    '<id> --name <name> --issuer <url> --client-id <id> --client-secret <secret> [--logo <url>] [--scopes "openid email profile"]',
  summary:
    'Add a partner OpenID provider to the sign-in picker (Federation v2); register PublicOrigin/auth/v1/federated/return at the partner.',
  example:
    'atrium partner add acme --name "Acme Corp" --issuer https://login.acme.example --client-id atrium --client-secret s3cr3t --logo https://acme.example/logo.svg',
  positionals: 1,
  options: {
    name: { type: 'string' },
    issuer: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    logo: { type: 'string' },
    scopes: { type: 'string' },
  },
  async run({ args, values }, { store }) {
    const slug = args[0] ?? ''
    if (!SLUG.test(slug)) {
      throw new UsageError(
        `id must be 2 to 32 lower-case letters, digits and -, starting with a letter; got ${JSON.stringify(slug)}`,
      )
    }
    if ((BUILT_IN_IDS as readonly string[]).includes(slug)) {
      throw new UsageError(`${slug} is a built-in sign-in method; give the partner another id`)
    }
    const name = required(values, 'name')
    if (name.length > 64) throw new UsageError('--name must be at most 64 characters')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (/[\u0000-\u001f\u007f]/.test(Object.values(values).join(''))) {
      throw new UsageError('options must not contain control characters')
    }
    const logo = stringOption(values, 'logo')?.trim() ?? ''
    const scopes = (stringOption(values, 'scopes') ?? 'openid email profile').split(/[\s,]+/).filter(Boolean)
    if (!scopes.includes('openid')) throw new UsageError('--scopes must include openid')
    const partner = await store.federation.partners.add({
      slug,
      name,
      logo_url: logo === '' ? '' : checkedUrl(logo, '--logo'),
      issuer: checkedUrl(required(values, 'issuer'), '--issuer'),
      client_id: required(values, 'client-id'),
      client_secret: required(values, 'client-secret'),
      scopes: scopes.join(' '),
    })
    if (!partner) throw new CommandFailed(`a partner with id ${slug} exists already; remove it first`)
    return {
      text: `Added partner ${slug} (${name}); the sign-in picker shows it now.`,
      json: { partner: { id: slug, name, logo: partner.logo_url, issuer: partner.issuer, scopes: partner.scopes } },
    }
  },
}

const listPartners: Command = {
  name: 'partner list',
  usage: '',
  summary: 'List the partner identity providers (client secrets are never shown).',
  example: 'atrium partner list --json',
  async run(_input, { store }) {
    const partners = (await store.federation.partners.list()).map((partner) => ({
      id: partner.slug,
      name: partner.name,
      logo: partner.logo_url,
      issuer: partner.issuer,
      clientId: partner.client_id,
      scopes: partner.scopes,
      created: partner.created,
    }))
    const rows = partners.map((p) => [p.id, p.name, p.issuer, p.clientId, p.scopes, formatTime(p.created)])
    return { text: formatTable(['ID', 'NAME', 'ISSUER', 'CLIENT ID', 'SCOPES', 'ADDED'], rows), json: { partners } }
  },
}

const removePartner: Command = {
  name: 'partner remove',
  usage: '<id>',
  summary: 'Remove a partner from the picker; its users keep their accounts and other sign-in methods.',
  example: 'atrium partner remove acme',
  positionals: 1,
  async run({ args }, { store }) {
    const slug = args[0] ?? ''
    if (!(await store.federation.partners.remove(slug))) throw new CommandFailed(`no partner ${slug}`)
    return { text: `Removed partner ${slug}.`, json: { removed: slug } }
  },
}

export const partnerCommands: Command[] = [addPartner, listPartners, removePartner]
