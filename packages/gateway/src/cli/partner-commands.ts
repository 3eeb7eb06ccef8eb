import { ApiError } from '@atrium/platform'
import { checkedPartner } from '../federation/partner-input.ts'
import { type Command, CommandFailed, formatTable, formatTime, stringOption, UsageError } from './command.ts'

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
    let input: ReturnType<typeof checkedPartner>
    try {
      input = checkedPartner({
        slug: args[0] ?? '',
        name: stringOption(values, 'name') ?? '',
        issuer: stringOption(values, 'issuer') ?? '',
        clientId: stringOption(values, 'client-id') ?? '',
        clientSecret: stringOption(values, 'client-secret') ?? '',
        logo: stringOption(values, 'logo'),
        scopes: stringOption(values, 'scopes'),
      })
    } catch (error) {
      throw error instanceof ApiError ? new UsageError(error.message) : error
    }
    const { slug, name } = input
    const partner = await store.federation.partners.add(input)
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
