import type { McpGrant, Subject } from '../mcp/grants.repository.ts'
import type { McpAuditEntry } from '../mcp/mcp-audit.repository.ts'
import { TOOL_NAMES } from '../mcp/tools.ts'
import {
  type CliContext,
  type Command,
  CommandFailed,
  type CommandInput,
  formatTable,
  formatTime,
  listOption,
  parseId,
  stringOption,
  UsageError,
} from './command.ts'

const SUBJECT_OPTIONS = { user: { type: 'string' }, app: { type: 'string' }, key: { type: 'string' } } as const

/** The one subject named by --user, --app or --key; undefined when `optional` and none is given. */
function parseSubject(values: CommandInput['values'], optional = false): Subject | undefined {
  const given = (['user', 'app', 'key'] as const).filter((kind) => values[kind] !== undefined)
  if (given.length === 0 && optional) return undefined
  if (given.length !== 1) throw new UsageError('give exactly one of --user <crmId>, --app <appId> or --key <keyId>')
  const kind = given[0]!
  return { kind, id: parseId(stringOption(values, kind), `--${kind}`) }
}

/** Checks that the subject exists, so a typo does not grant to nobody. */
async function checkSubject(subject: Subject, { store }: CliContext): Promise<void> {
  const found =
    subject.kind === 'user'
      ? await store.users.get(subject.id)
      : subject.kind === 'app'
        ? await store.apps.get(subject.id)
        : (await store.apiKeys.list()).find((key) => key.id === subject.id && !key.revoked)
  if (!found) throw new CommandFailed(`no ${subject.kind === 'key' ? 'active key' : subject.kind} ${subject.id}`)
}

function parseTools(values: CommandInput['values']): string[] {
  const tools = [...new Set(listOption(values, 'tool'))]
  if (tools.length === 0) throw new UsageError(`--tool is required: one or more of ${TOOL_NAMES.join(', ')}, or all`)
  if (tools.includes('all')) return [...TOOL_NAMES]
  const unknown = tools.find((tool) => !TOOL_NAMES.includes(tool))
  if (unknown) throw new UsageError(`unknown tool ${JSON.stringify(unknown)}: the tools are ${TOOL_NAMES.join(', ')}`)
  return tools
}

function parseCurrency(values: CommandInput['values']): string | undefined {
  const currency = stringOption(values, 'currency')
  if (currency !== undefined && !/^[A-Z][A-Z0-9]{2,9}$/.test(currency)) {
    throw new UsageError(`--currency must be a currency code like USD, got ${JSON.stringify(currency)}`)
  }
  return currency
}

/** An amount limit in hundredths: a positive number with at most two decimal places. */
function parseAmount(values: CommandInput['values'], name: string): number {
  const text = stringOption(values, name)
  if (text === undefined) return 0
  if (!/^[0-9]{1,13}(\.[0-9]{1,2})?$/.test(text) || Number(text) <= 0) {
    throw new UsageError(`--${name} must be a positive amount with at most two decimals, got ${JSON.stringify(text)}`)
  }
  return Math.round(Number(text) * 100)
}

function amountText(hundredths: number): string {
  return hundredths > 0 ? (hundredths / 100).toFixed(2) : '-'
}

function grantView(grant: McpGrant) {
  return {
    subject: `${grant.subject_kind}:${grant.subject_id}`,
    tool: grant.tool,
    currency: grant.currency,
    perCall: grant.per_call / 100,
    perDay: grant.per_day / 100,
    created: grant.created,
  }
}

const allow: Command = {
  name: 'mcp allow',
  usage: '--user <crmId> | --app <appId> | --key <keyId> --tool t1,t2|all [--currency C [--per-call n] [--per-day n]]',
  summary:
    'Grant MCP tools to a user, an app or one API key (tools are denied by default). For wallet_send, --currency narrows the grant to one currency and --per-call / --per-day cap its amounts (per UTC day).',
  example:
    'atrium mcp allow --user 123456789 --tool wallet_balance,wallet_send --currency USD --per-call 50 --per-day 200',
  options: {
    ...SUBJECT_OPTIONS,
    tool: { type: 'string' },
    currency: { type: 'string' },
    'per-call': { type: 'string' },
    'per-day': { type: 'string' },
  },
  async run({ values }, context) {
    const subject = parseSubject(values)!
    const tools = parseTools(values)
    const currency = parseCurrency(values)
    const perCall = parseAmount(values, 'per-call')
    const perDay = parseAmount(values, 'per-day')
    if (currency !== undefined && tools.some((tool) => tool !== 'wallet_send')) {
      throw new UsageError(
        '--currency, --per-call and --per-day apply to wallet_send only: grant other tools separately',
      )
    }
    if ((perCall > 0 || perDay > 0) && currency === undefined) {
      throw new UsageError('--per-call and --per-day need --currency: amounts of different currencies do not add up')
    }
    await checkSubject(subject, context)
    const grants = []
    for (const tool of tools) {
      grants.push(await context.store.mcpGrants.allow({ subject, tool, currency: currency ?? '', perCall, perDay }))
    }
    const views = grants.map(grantView)
    const limits = currency ? ` in ${currency} (per call ${amountText(perCall)}, per day ${amountText(perDay)})` : ''
    return {
      text: `Allowed ${tools.join(', ')} for ${subject.kind} ${subject.id}${limits}`,
      json: { grants: views },
    }
  },
}

const deny: Command = {
  name: 'mcp deny',
  usage: '--user <crmId> | --app <appId> | --key <keyId> --tool t1,t2|all [--currency C]',
  summary:
    "Take MCP tools back from a user, an app or a key (with --currency: only wallet_send's grant in that currency).",
  example: 'atrium mcp deny --key 987654321 --tool wallet_send',
  options: { ...SUBJECT_OPTIONS, tool: { type: 'string' }, currency: { type: 'string' } },
  async run({ values }, { store }) {
    const subject = parseSubject(values)!
    const tools = parseTools(values)
    const currency = parseCurrency(values)
    let removed = 0
    for (const tool of tools) removed += await store.mcpGrants.deny(subject, tool, currency)
    if (removed === 0) throw new CommandFailed(`${subject.kind} ${subject.id} had no such grant`)
    return { text: `Removed ${removed} grant(s) from ${subject.kind} ${subject.id}`, json: { removed } }
  },
}

const list: Command = {
  name: 'mcp list',
  usage: '[--user <crmId> | --app <appId> | --key <keyId>]',
  summary: 'List MCP grants, all or of one subject. A caller may use the union of its user’s, app’s and key’s tools.',
  example: 'atrium mcp list --user 123456789',
  options: SUBJECT_OPTIONS,
  async run({ values }, { store }) {
    const grants = (await store.mcpGrants.list(parseSubject(values, true))).map(grantView)
    const rows = grants.map((grant) => [
      grant.subject,
      grant.tool,
      grant.currency || '-',
      amountText(grant.perCall * 100),
      amountText(grant.perDay * 100),
    ])
    return { text: formatTable(['SUBJECT', 'TOOL', 'CURRENCY', 'PER CALL', 'PER DAY'], rows), json: { grants } }
  },
}

/** `--since`: an ISO time, or a duration back from now like `90m`, `24h`, `7d`. */
function parseSince(text: string | undefined, now: number): number {
  if (text === undefined) return now - 86_400_000
  const duration = /^([0-9]{1,6})([mhd])$/.exec(text)
  if (duration)
    return now - Number(duration[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as 'm' | 'h' | 'd']
  const time = Date.parse(text)
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(time)) {
    throw new UsageError(
      `--since must be an ISO time (2026-11-26T08:00Z) or a duration like 24h, got ${JSON.stringify(text)}`,
    )
  }
  return time
}

function auditView(entry: McpAuditEntry) {
  return {
    time: new Date(entry.created).toISOString(),
    crmId: String(entry.crm_id),
    appId: String(entry.app_id),
    keyId: String(entry.key_id),
    keyType: entry.key_type,
    tool: entry.tool,
    argsDigest: entry.args_digest,
    outcome: entry.outcome,
    errorCode: entry.error_code,
    durationMs: entry.duration_ms,
  }
}

const audit: Command = {
  name: 'mcp audit',
  usage: '[--since <ISO time | 24h>] [--limit n]',
  summary:
    'List MCP tool calls (allowed and refused), oldest first: who, which tool, a digest of the arguments, the outcome.',
  example: 'atrium mcp audit --since 24h',
  options: { since: { type: 'string' }, limit: { type: 'string' } },
  async run({ values }, { store }) {
    const since = parseSince(stringOption(values, 'since'), Date.now())
    const limitText = stringOption(values, 'limit') ?? '100'
    if (!/^[1-9][0-9]{0,3}$/.test(limitText)) throw new UsageError('--limit must be 1 to 9999')
    const entries = (await store.mcpAudit.listSince(since, Number(limitText))).map(auditView)
    const rows = entries.map((entry) => [
      entry.time,
      entry.keyType,
      entry.crmId,
      entry.appId === '0' ? '-' : entry.appId,
      entry.keyId === '0' ? '-' : entry.keyId,
      entry.tool,
      entry.outcome,
      entry.errorCode ? String(entry.errorCode) : '-',
      `${entry.durationMs} ms`,
      entry.argsDigest.slice(0, 12),
    ])
    return {
      text: formatTable(['TIME', 'TYPE', 'USER', 'APP', 'KEY', 'TOOL', 'OUTCOME', 'CODE', 'TOOK', 'ARGS'], rows),
      json: { since: formatTime(since), entries },
    }
  },
}

export const mcpCommands: Command[] = [allow, deny, list, audit]
