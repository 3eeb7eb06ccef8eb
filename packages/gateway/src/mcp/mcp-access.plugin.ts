import { ApiError, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import type { ApiKeys } from '../auth/api-keys.repository.ts'
import { requireUserSession } from '../auth/caller.ts'
import {
  type McpGrant,
  type McpGrants,
  type Subject,
  type SubjectKind,
  subjectsOf,
  utcDay,
} from './grants.repository.ts'
import { TOOLS } from './tools.ts'

export interface McpAccessPluginOptions {
  grants: McpGrants
  apiKeys: ApiKeys
  /** The gateway's PublicOrigin: the endpoint URL an assistant is given is built on it. */
  publicOrigin: string
  /** Mcp.Enabled: when false the overview answers NotFound, as the endpoint is not there. */
  enabled: boolean
  now: () => number
}

const GrantedTo = Type.Union([Type.Literal('user'), Type.Literal('app'), Type.Literal('key')], {
  description: 'Whom the grant is on: the user, the app of the session, or one API key.',
})

const Amount = Type.Number({ minimum: 0, description: 'In the currency, at most two decimals.' })

const SendLimit = Type.Object({
  grantedTo: GrantedTo,
  currency: Type.String({ description: 'The one currency the grant covers; "" for any currency.' }),
  perCall: Type.Number({ minimum: 0, description: 'Largest single send; 0 for no limit.' }),
  perDay: Type.Number({
    minimum: 0,
    description: 'Most sent per UTC day through MCP in one currency by this subject; 0 for no limit.',
  }),
  spentToday: Type.Array(Type.Object({ currency: Type.String(), amount: Amount }), {
    description:
      'What this subject sent through MCP today (UTC), per currency, from the day counters the per-day limit checks: the grant’s currency, or every currency for an any-currency grant. Counted only while the grant has a per-day limit.',
  }),
})

const ToolAccess = Type.Object({
  name: Type.String({ description: 'The tool name, as in tools/list.' }),
  title: Type.String({ description: 'The tool’s title, as in tools/list.' }),
  grantedTo: Type.Array(GrantedTo),
  sends: Type.Array(SendLimit, { description: 'wallet_send only: each grant with its currency and limits.' }),
})

const KeyAccess = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'Public part of the key (`atr_<prefix>_…`).' }),
  created: Type.Integer(),
  lastUsed: Type.Integer({ description: 'Epoch ms, to the minute; 0 when never used.' }),
  tools: Type.Array(ToolAccess, {
    description: 'Tools granted to this key itself; a call with the key may also use the user’s tools.',
  }),
})

const accessOverview = {
  response: {
    200: Type.Object({
      endpoint: Type.String({ description: 'The MCP endpoint URL to give an assistant, on PublicOrigin.' }),
      day: Type.String({ description: 'The UTC day (YYYY-MM-DD) the spent amounts are of.' }),
      tools: Type.Array(ToolAccess, {
        description:
          'Tools granted to the user (and to the session’s app, should a user session carry one), in tools/list order.',
      }),
      keys: Type.Array(KeyAccess, { description: 'The user’s active API keys, newest first.' }),
    }),
  },
}

const TITLES = new Map(TOOLS.map((tool) => [tool.name, tool.title]))
const ORDER = new Map(TOOLS.map((tool, index) => [tool.name, index]))

const decimal = (hundredths: number) => hundredths / 100

/**
 * GET /auth/v1/mcp/access (docs/mcp.md, "Connecting an assistant"): for the signed-in user's own
 * account page, the MCP endpoint URL, the tools an operator granted to them (with wallet_send's
 * limits and what was spent against them today) and, for each of their API keys, the tools granted
 * to that key. Only a user session may ask, and only about itself.
 */
export default async function mcpAccessPlugin(app: Service, options: McpAccessPluginOptions) {
  const { grants, apiKeys } = options
  const endpoint = new URL('/auth/v1/mcp', options.publicOrigin).href

  /** The subjects' grants as tools, each with its wallet_send limits and today's counters. */
  async function toolsOf(subjects: Subject[], day: string) {
    const rows = (await Promise.all(subjects.map((subject) => grants.list(subject)))).flat()
    const spent = new Map<SubjectKind, { currency: string; spent: number }[]>()
    for (const subject of subjects) spent.set(subject.kind, await grants.spentOn(subject, day))
    const tools = new Map<string, { grantedTo: SubjectKind[]; sends: McpGrant[] }>()
    for (const row of rows) {
      const tool = tools.get(row.tool) ?? { grantedTo: [], sends: [] }
      const kind = row.subject_kind as SubjectKind
      if (!tool.grantedTo.includes(kind)) tool.grantedTo.push(kind)
      if (row.tool === 'wallet_send') tool.sends.push(row)
      tools.set(row.tool, tool)
    }
    return [...tools]
      .sort(([a], [b]) => (ORDER.get(a) ?? TOOLS.length) - (ORDER.get(b) ?? TOOLS.length) || a.localeCompare(b))
      .map(([name, tool]) => ({
        name,
        title: TITLES.get(name) ?? name,
        grantedTo: tool.grantedTo,
        sends: tool.sends.map((grant) => {
          const kind = grant.subject_kind as SubjectKind
          const counted = grant.per_day > 0 ? (spent.get(kind) ?? []) : []
          return {
            grantedTo: kind,
            currency: grant.currency,
            perCall: decimal(grant.per_call),
            perDay: decimal(grant.per_day),
            spentToday: counted
              .filter((entry) => grant.currency === '' || entry.currency === grant.currency)
              .map((entry) => ({ currency: entry.currency, amount: decimal(entry.spent) })),
          }
        }),
      }))
  }

  app.get('/mcp/access', { schema: accessOverview }, async (request) => {
    if (!options.enabled) throw new ApiError('NotFound', 'Tools for AI assistants (MCP) are turned off on this server.')
    const caller = requireUserSession(request.caller, 'Sign in to see what your AI assistants may do.')
    const day = utcDay(options.now())
    // A session has no key of its own; its subjects are the user and, for an app's session, the app.
    const keys = (await apiKeys.list({ crmId: caller.crmId })).filter(
      (key) => key.key_type === 'user' && key.revoked === 0,
    )
    return {
      endpoint,
      day,
      tools: await toolsOf(subjectsOf({ ...caller, apiKeyId: 0 }), day),
      keys: await Promise.all(
        keys.map(async (key) => ({
          id: String(key.id),
          name: key.name,
          prefix: key.prefix,
          created: key.created,
          lastUsed: key.last_used,
          tools: await toolsOf([{ kind: 'key', id: key.id }], day),
        })),
      ),
    }
  })
}
