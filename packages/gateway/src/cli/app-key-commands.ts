import { AppFlag } from '@atrium/platform'
import {
  APP_NAME_MAX,
  type App,
  type AppPatch,
  appName,
  appOrigins,
  eventTypeList,
  normalizeOrigin,
  normalizeWebhookUrl,
} from '../apps/apps.repository.ts'
import type { ApiKey } from '../auth/api-keys.repository.ts'
import { parseScopes } from '../auth/caller.ts'
import {
  type Command,
  CommandFailed,
  type CommandInput,
  checked,
  flagNames,
  formatTable,
  formatTime,
  listOption,
  parseFlags,
  parseId,
  parseScopeList,
  stringOption,
  UsageError,
} from './command.ts'

function appView(app: App) {
  return {
    id: String(app.id),
    name: app.name,
    owner: String(app.owner),
    flags: app.flags,
    callbackUrl: app.callback_url,
    origins: appOrigins(app),
    eventTypes: JSON.parse(app.event_types) as string[],
    created: app.created,
  }
}

function keyView(key: ApiKey) {
  return {
    id: String(key.id),
    prefix: key.prefix,
    name: key.name,
    keyType: key.key_type,
    crmId: String(key.crm_id),
    appId: String(key.app_id),
    scopes: parseScopes(key.scopes),
    created: key.created,
    lastUsed: key.last_used,
    revoked: key.revoked,
  }
}

const APP_OPTIONS = {
  name: { type: 'string' },
  flags: { type: 'string' },
  callback: { type: 'string' },
  origins: { type: 'string' },
  events: { type: 'string' },
} as const

/** The app settings given on the command line, validated; options not given are undefined. */
function parseAppOptions(values: CommandInput['values']): AppPatch {
  const name = stringOption(values, 'name')
  const flags = stringOption(values, 'flags')
  const callback = stringOption(values, 'callback')
  return {
    name: name === undefined ? undefined : checked(() => appName(name)),
    flags: flags === undefined ? undefined : parseFlags(flags, AppFlag),
    // An empty --callback removes the webhook URL.
    callbackUrl: callback === undefined ? undefined : checked(() => normalizeWebhookUrl(callback)),
    origins:
      values.origins === undefined
        ? undefined
        : [...new Set(listOption(values, 'origins').map((origin) => checked(() => normalizeOrigin(origin))))],
    eventTypes: values.events === undefined ? undefined : checked(() => eventTypeList(listOption(values, 'events'))),
  }
}

const createApp: Command = {
  name: 'app create',
  usage: '--name n --owner <crmId> [--flags AppAuthAndCORS] [--callback url] [--origins a,b] [--events t1,t2]',
  summary: 'Create an app; its id, secret (for AppLogin) and webhook signing secret are printed once.',
  example:
    'atrium app create --name Shop --owner 123456789 --flags AppAuthAndCORS --origins https://shop.example --callback https://shop.example/hook --events NewChatMessage,ChatCreated',
  options: { ...APP_OPTIONS, owner: { type: 'string' } },
  async run({ values }, { store }) {
    if (!stringOption(values, 'name')) throw new UsageError(`--name is required (at most ${APP_NAME_MAX} characters)`)
    const owner = parseId(stringOption(values, 'owner'), '--owner')
    const { name = '', flags, callbackUrl, origins, eventTypes } = parseAppOptions(values)
    if (!(await store.users.get(owner))) throw new CommandFailed(`no user ${owner} to own the app`)
    const { app, secret } = await store.apps.create({ name, owner, flags, callbackUrl, origins, eventTypes })
    return {
      text: [
        `Created app ${app.id} (${app.name})`,
        `  id:     ${app.id}`,
        `  secret: ${secret}`,
        `  webhook signing secret: ${app.webhook_secret}`,
        'The secrets are shown only now; store them safely.',
      ].join('\n'),
      json: { app: appView(app), secret, webhookSecret: app.webhook_secret },
    }
  },
}

const updateApp: Command = {
  name: 'app update',
  usage: '<appId> [--name n] [--flags f] [--callback url] [--origins a,b] [--events t1,t2]',
  summary: 'Change an app: only the options given change; an empty value clears (--callback "" stops its webhooks).',
  example: 'atrium app update 123456789 --callback https://shop.example/hooks/atrium --events NewChatMessage',
  positionals: 1,
  options: APP_OPTIONS,
  async run({ args, values }, { store }) {
    const id = parseId(args[0], 'app id')
    const patch = parseAppOptions(values)
    if (Object.values(patch).every((value) => value === undefined)) throw new UsageError('nothing to change')
    const app = await store.apps.update(id, patch)
    if (!app) throw new CommandFailed(`no app ${id}`)
    const view = appView(app)
    return {
      text: [
        `Updated app ${view.id} (${view.name})`,
        `  flags:    ${flagNames(view.flags, AppFlag) || '-'}`,
        `  origins:  ${view.origins.join(' ') || '-'}`,
        `  callback: ${view.callbackUrl || '-'}`,
        `  events:   ${view.eventTypes.join(' ') || '-'}`,
      ].join('\n'),
      json: { app: view },
    }
  },
}

const listApps: Command = {
  name: 'app list',
  usage: '',
  summary: 'List apps (never their secrets).',
  example: 'atrium app list',
  async run(_input, { store }) {
    const apps = (await store.apps.list()).map(appView)
    const rows = apps.map((app) => [
      app.id,
      app.name,
      app.owner,
      flagNames(app.flags, AppFlag),
      app.origins.join(' ') || '-',
      app.callbackUrl || '-',
    ])
    return { text: formatTable(['ID', 'NAME', 'OWNER', 'FLAGS', 'ORIGINS', 'CALLBACK'], rows), json: { apps } }
  },
}

const issueKey: Command = {
  name: 'key issue',
  usage: '--user <crmId> | --app <appId> [--name n] [--scopes a,b]',
  summary: 'Issue an API key acting as a user, or a service key acting as an app; the key is printed once.',
  example: 'atrium key issue --user 123456789 --name deploy --scopes admin',
  options: { user: { type: 'string' }, app: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' } },
  async run({ values }, { store }) {
    const userText = stringOption(values, 'user')
    const appText = stringOption(values, 'app')
    if ((userText === undefined) === (appText === undefined))
      throw new UsageError('give exactly one of --user or --app')
    const name = stringOption(values, 'name') ?? 'cli'
    if (name.length === 0 || name.length > 100) throw new UsageError('--name must have 1 to 100 characters')
    const scopes = parseScopeList(stringOption(values, 'scopes') ?? '')
    let crmId = 0
    let appId = 0
    if (userText !== undefined) {
      crmId = parseId(userText, '--user')
      if (!(await store.users.get(crmId))) throw new CommandFailed(`no user ${crmId}`)
    } else {
      appId = parseId(appText, '--app')
      if (!(await store.apps.get(appId))) throw new CommandFailed(`no app ${appId}`)
    }
    const { key, row } = await store.apiKeys.create({ keyType: appId ? 'service' : 'user', crmId, appId, scopes, name })
    return {
      text: [
        `Issued ${row.key_type} key ${row.id} (${row.name})`,
        `  key: ${key}`,
        'The key is shown only now; store it safely.',
      ].join('\n'),
      json: { key, apiKey: keyView(row) },
    }
  },
}

const revokeKey: Command = {
  name: 'key revoke',
  usage: '<id>',
  summary: 'Revoke an API key by id; it stops working at once on this gateway and within seconds on others.',
  example: 'atrium key revoke 987654321',
  positionals: 1,
  async run({ args }, { store }) {
    const id = parseId(args[0], 'key id')
    if (!(await store.apiKeys.revoke(id))) throw new CommandFailed(`no active key ${id}`)
    return { text: `Revoked key ${id}`, json: { id: String(id), revoked: true } }
  },
}

const listKeys: Command = {
  name: 'key list',
  usage: '',
  summary: 'List API keys (prefix only, never the secret).',
  example: 'atrium key list',
  async run(_input, { store }) {
    const keys = (await store.apiKeys.list()).map(keyView)
    const rows = keys.map((key) => [
      key.id,
      key.prefix,
      key.keyType,
      key.keyType === 'service' ? `app ${key.appId}` : `user ${key.crmId}`,
      key.name,
      key.scopes.join(' ') || '-',
      key.revoked ? `revoked ${formatTime(key.revoked)}` : 'active',
    ])
    return { text: formatTable(['ID', 'PREFIX', 'TYPE', 'ACTS AS', 'NAME', 'SCOPES', 'STATE'], rows), json: { keys } }
  },
}

export const appCommands: Command[] = [createApp, updateApp, listApps]
export const keyCommands: Command[] = [issueKey, revokeKey, listKeys]
