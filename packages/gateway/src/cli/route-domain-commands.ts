import { RouteFlags } from '@atrium/platform'
import { toDomainView, verifyProjectDomain } from '../domains/domains.plugin.ts'
import { normalizeDomain, VERIFIED } from '../domains/domains.repository.ts'
import { type Command, CommandFailed, flagNames, formatTable, formatTime, parseFlags, stringOption } from './command.ts'
import { redactConfig } from './redact.ts'

const addRoute: Command = {
  name: 'route add',
  usage: '<prefix> <upstream> [--flags AppAuthAndCORS,RequireSession]',
  summary: 'Route requests under a path prefix to a module (a name from the Modules setting, or an http(s) URL).',
  example: 'atrium route add /chat/ chat --flags RequireSession',
  options: { flags: { type: 'string' } },
  positionals: 2,
  async run({ args, values }, { store }) {
    const route = await store.routes.add({
      prefix: args[0]!,
      upstream: args[1]!,
      flags: parseFlags(stringOption(values, 'flags'), RouteFlags),
    })
    return {
      text: `Added route ${route.prefix} -> ${route.upstream} (${flagNames(route.flags, RouteFlags)})`,
      json: { route: { ...route, id: String(route.id) } },
    }
  },
}

const listRoutes: Command = {
  name: 'route list',
  usage: '',
  summary: 'List the route map.',
  example: 'atrium route list',
  async run(_input, { store }) {
    const routes = await store.routes.list()
    const rows = routes.map((route) => [route.prefix, route.upstream, flagNames(route.flags, RouteFlags)])
    return {
      text: formatTable(['PREFIX', 'UPSTREAM', 'FLAGS'], rows),
      json: { routes: routes.map((route) => ({ ...route, id: String(route.id) })) },
    }
  },
}

const removeRoute: Command = {
  name: 'route remove',
  usage: '<prefix>',
  summary: 'Remove the route with this prefix.',
  example: 'atrium route remove /chat/',
  positionals: 1,
  async run({ args }, { store }) {
    if (!(await store.routes.remove(args[0]!))) throw new CommandFailed(`no route ${args[0]}`)
    return { text: `Removed route ${args[0]}`, json: { prefix: args[0], removed: true } }
  },
}

const addDomain: Command = {
  name: 'domain add',
  usage: '<domain>',
  summary: 'Add a project domain and print the TXT record that proves ownership.',
  example: 'atrium domain add chat.example.com',
  positionals: 1,
  async run({ args }, { domains }) {
    const view = toDomainView(await domains.add(args[0]!))
    return {
      text: [
        `Domain ${view.domain}: ${view.state}`,
        'Publish this DNS record, then run `atrium domain verify`:',
        `  ${view.txtName}. TXT "${view.txtValue}"`,
      ].join('\n'),
      json: view,
    }
  },
}

const verifyDomain: Command = {
  name: 'domain verify',
  usage: '<domain>',
  summary: 'Check the TXT record of a project domain now; verified when it holds the token.',
  example: 'atrium domain verify chat.example.com',
  positionals: 1,
  async run({ args }, { domains, checkDomain }) {
    const row = await domains.get(normalizeDomain(args[0]!))
    if (!row) throw new CommandFailed(`no project domain ${args[0]}; add it first`)
    const checked = await verifyProjectDomain(domains, checkDomain, row)
    if (checked.state !== VERIFIED) throw new CommandFailed(`${checked.domain} is not verified: ${checked.last_error}`)
    return { text: `Domain ${checked.domain}: verified`, json: toDomainView(checked) }
  },
}

const listDomains: Command = {
  name: 'domain list',
  usage: '',
  summary: 'List project domains with their state and the TXT record each needs.',
  example: 'atrium domain list',
  async run(_input, { domains }) {
    const views = (await domains.list()).map(toDomainView)
    const rows = views.map((view) => [
      view.domain,
      view.state,
      formatTime(view.checked),
      view.lastError || '-',
      `${view.txtName} TXT ${view.txtValue}`,
    ])
    return {
      text: formatTable(['DOMAIN', 'STATE', 'CHECKED', 'LAST ERROR', 'RECORD'], rows),
      json: { domains: views },
    }
  },
}

const showConfig: Command = {
  name: 'config',
  usage: '',
  summary: 'Print the effective gateway settings (file + environment + defaults) as JSON, secrets redacted.',
  example: 'ATRIUM_CONFIG=atrium.json atrium config',
  needsStore: false,
  async run(_input, { config, serviceSecretUnset }) {
    const redacted = redactConfig(serviceSecretUnset ? { ...config, ServiceSecret: '' } : config)
    return { text: JSON.stringify(redacted, null, 2), json: redacted }
  },
}

export const routeCommands: Command[] = [addRoute, listRoutes, removeRoute]
export const domainCommands: Command[] = [addDomain, verifyDomain, listDomains]
export const configCommands: Command[] = [showConfig]
