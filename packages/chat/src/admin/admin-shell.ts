import { readIdentity, timetickAt } from '@atrium/platform'
import { ADMIN_PAGE_HEADERS, type AdminPageOptions, html, renderAdminPage } from '@atrium/platform/admin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type Static, Type } from 'typebox'

/** Where the operator pages live (spec: "Chat admin pages (/ChatAdmin/)"). */
export const ADMIN_ROOT = '/ChatAdmin'
/** The scope an operator's session carries (the gateway's operator scope, sent in X-Scopes). */
export const OPERATOR_SCOPE = 'admin'
/** The web client's sign-in page; it returns to `next` once signed in. */
export const SIGN_IN_PATH = '/chat/sign-in'

/** The sections of the panel, in the header of every page. */
export const NAV = [
  { href: `${ADMIN_ROOT}`, label: 'Dashboard' },
  { href: `${ADMIN_ROOT}/Chats`, label: 'Chats' },
  { href: `${ADMIN_ROOT}/Messages`, label: 'Messages' },
  { href: `${ADMIN_ROOT}/Members`, label: 'Members' },
  { href: `${ADMIN_ROOT}/Feedback`, label: 'Feedback' },
  { href: `${ADMIN_ROOT}/UserFiles`, label: 'User files' },
  { href: `${ADMIN_ROOT}/FileStatistic`, label: 'File statistic' },
  { href: `${ADMIN_ROOT}/Calls`, label: 'Calls' },
  { href: `${ADMIN_ROOT}/Escalations`, label: 'Escalations' },
  { href: `${ADMIN_ROOT}/BotWidgets`, label: 'Bot widgets' },
]

/** Rows a list shows when Limit is not given, and the bounds Limit is clamped to (spec: "Limits"). */
export const DEFAULT_LIMIT = 100
export const MAX_LIMIT = 10_000

/** Sends a whole page of the panel; `status` for refusals and bad filters. */
export function sendPage(
  reply: FastifyReply,
  page: Omit<AdminPageOptions, 'panel' | 'nav'>,
  status = 200,
): FastifyReply {
  return reply
    .status(status)
    .headers(ADMIN_PAGE_HEADERS)
    .send(renderAdminPage({ panel: 'Atrium chat', nav: NAV, ...page }))
}

/**
 * The operator gate of every page and action: an anonymous caller is sent to sign in and comes
 * back; a signed-in caller without the admin scope gets a 403 page; an operator passes and
 * `request.operator` is their CRM id.
 */
export async function requireOperator(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const identity = readIdentity(request)
  if (identity.crmId === 0) {
    const path = request.method === 'GET' ? request.url : ADMIN_ROOT
    return reply.redirect(`${SIGN_IN_PATH}?${new URLSearchParams({ next: path })}`, 303)
  }
  if (!identity.scopes.includes(OPERATOR_SCOPE)) {
    return sendPage(
      reply,
      {
        title: 'Not allowed',
        current: '',
        body: html`<p class="empty">
          You need the admin scope to use the chat operator pages. Ask an administrator to grant it, then sign in again.
        </p>`,
      },
      403,
    )
  }
  request.operator = identity.crmId
  return undefined
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The operator's CRM id, set by requireOperator. */
    operator: number
  }
}

// Query values arrive as strings; a GET form sends every field, so each may also be empty.
const optional = (pattern: string, description: string) => Type.Optional(Type.String({ pattern, description }))
/** An id (timetick) or empty. */
export const IdParam = (description: string) => optional('^([0-9]{1,16})?$', description)
/** A count or byte size, or empty. */
export const NumberParam = (description: string) => optional('^([0-9]{1,15})?$', description)
/** A UTC date or date-time (as a date or datetime-local input sends it), or empty. */
export const DateParam = (description: string) =>
  optional('^([0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2})?)?)?$', description)
/** A short text filter. */
export const TextParam = (description: string) => Type.Optional(Type.String({ maxLength: 200, description }))
/** `true` or anything else (a checkbox). */
export const FlagParam = (description: string) => optional('^(true|false|on|1|0)?$', description)

export const ListQuery = {
  Limit: NumberParam(`Rows per page: default ${DEFAULT_LIMIT}, clamped to 1..${MAX_LIMIT}.`),
  FromTick: IdParam('Cursor: rows before this tick (the next-page link carries it).'),
}

/** The number in a query value, or undefined when it is absent or empty. */
export function numberOf(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined
  const number = Number(value)
  return Number.isSafeInteger(number) ? number : undefined
}

/** Limit clamped to 1..10000, 100 when absent (spec: "Limits"). */
export function limitOf(value: string | undefined): number {
  const limit = numberOf(value)
  if (limit === undefined) return DEFAULT_LIMIT
  return Math.min(MAX_LIMIT, Math.max(1, limit))
}

/** True for a checked checkbox. */
export function flagOf(value: string | undefined): boolean {
  return value === 'true' || value === 'on' || value === '1'
}

function epochOf(value: string): number {
  const text = value.replace(' ', 'T')
  return Date.parse(text.length === 10 ? `${text}T00:00:00Z` : `${text.length === 16 ? `${text}:00` : text}Z`)
}

/**
 * The tick bounds of DateFrom and DateTo, in UTC: from is inclusive; to is the end of that day for
 * a date, or that very instant for a date-time (exclusive). Undefined bounds are open.
 */
export function tickRange(from: string | undefined, to: string | undefined): { min?: number; below?: number } {
  const range: { min?: number; below?: number } = {}
  if (from) range.min = timetickAt(epochOf(from))
  if (to) range.below = timetickAt(epochOf(to) + (to.length === 10 ? 86_400_000 : 0))
  return range
}

/** "Alice Archer (891241565626240)", or the bare id for someone without a name. */
export function personLabel(names: Map<number, string>, id: number): string {
  const name = names.get(id)
  return name ? `${name} (${id})` : String(id)
}

/**
 * The outcomes of actions, by the key an action's redirect carries (?Done= or ?Failed=). Only
 * these fixed texts are shown, so a link cannot put words of its own on an operator's page.
 */
export const NOTICES = {
  archived: 'Chat archived: it is read-only until unarchived.',
  unarchived: 'Chat unarchived.',
  'member-removed': 'Member removed from the chat.',
  'message-deleted': 'Message deleted (soft delete: it stays visible here with ShowDeleted).',
  'escalation-taken': 'You joined the support chat; answer the customer in the chat client.',
  'chat-not-found': 'No such chat.',
  'member-not-found': 'That person is not a member of the chat.',
  'owner-stays': "The chat's owner cannot be removed; archive the chat instead.",
  'message-not-found': 'No such message.',
  'not-support-chat': 'That chat is not a support chat.',
  'already-member': 'You are already in that support chat.',
  'profile-unknown': 'Your profile has not reached the chat module yet; sign in again and retry.',
} as const
export type NoticeKey = keyof typeof NOTICES

const NOTICE_KEY = `^(${Object.keys(NOTICES).join('|')})?$`

export const NoticeQuery = {
  Done: optional(NOTICE_KEY, 'Which action was just done.'),
  Failed: optional(NOTICE_KEY, 'Why an action just tried was refused.'),
}

/** The one-line feedback a page shows after an action redirected to it. */
export function noticeOf(query: { Done?: string; Failed?: string }): AdminPageOptions['notice'] {
  if (query.Failed) return { text: NOTICES[query.Failed as NoticeKey], error: true }
  if (query.Done) return { text: NOTICES[query.Done as NoticeKey] }
  return undefined
}

export type ListQueryType = Static<Type.TObject<typeof ListQuery>>
