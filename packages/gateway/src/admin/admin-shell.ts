import { ApiError } from '@atrium/platform'
import { ADMIN_PAGE_HEADERS, adminHref, html, type LiveRefresh, renderAdminPage } from '@atrium/platform/admin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ComponentChildren } from 'preact'
import { Type } from 'typebox'
import type { Users } from '../users/users.repository.ts'
import type { AdminActions } from './admin-actions.repository.ts'

/** Where the operator panel lives; every page and action is under it. */
export const ADMIN_ROOT = '/ProxyAdmin'

/** The scope an operator has (spec "Authentication" 10: the gateway's admin scope). */
export const OPERATOR_SCOPE = 'admin'

const PANEL = 'Atrium gateway'

const NAV = [
  { href: `${ADMIN_ROOT}/Users`, label: 'Users' },
  { href: `${ADMIN_ROOT}/Routes`, label: 'Routes' },
  { href: `${ADMIN_ROOT}/LoginAudit`, label: 'Login audit' },
  { href: `${ADMIN_ROOT}/PushSubscriptions`, label: 'Push subscriptions' },
  { href: `${ADMIN_ROOT}/StunMonitor`, label: 'STUN monitor' },
  { href: `${ADMIN_ROOT}/Apps`, label: 'Apps' },
  { href: `${ADMIN_ROOT}/Domains`, label: 'Domains' },
  { href: `${ADMIN_ROOT}/Partners`, label: 'Federation partners' },
  { href: `${ADMIN_ROOT}/Settings`, label: 'Settings' },
  { href: `${ADMIN_ROOT}/Actions`, label: 'Operator actions' },
]

/** What every page module of the panel gets. */
export interface AdminContext {
  actions: AdminActions
  users: Users
}

/** Query strings of list pages: every field a string, checked by the page. */
export const pageQuery = {
  querystring: Type.Record(Type.String(), Type.String({ maxLength: 256 })),
}

/** Bodies of action forms: string fields only, checked by the action. */
export const actionBody = {
  body: Type.Record(Type.String(), Type.String({ maxLength: 4096 })),
}

export type PageQuery = Record<string, string>

/** Sends a page of the panel in the shell; `?notice=` / `?error=` from an action's redirect become its notice line. */
export function sendAdminPage(
  request: FastifyRequest,
  reply: FastifyReply,
  page: { title: string; current: string; body: ComponentChildren; live?: LiveRefresh; status?: number },
): FastifyReply {
  const query = (request.query ?? {}) as PageQuery
  const notice = query.error ? { text: query.error, error: true } : query.notice ? { text: query.notice } : undefined
  return reply
    .code(page.status ?? 200)
    .headers(ADMIN_PAGE_HEADERS)
    .send(
      renderAdminPage({
        panel: PANEL,
        title: page.title,
        nav: NAV,
        current: page.current,
        body: page.body,
        notice,
        live: page.live,
      }),
    )
}

/** The 403 page every page and action answers a signed-in caller without the operator scope. */
export function sendForbidden(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendAdminPage(request, reply, {
    title: 'Not allowed',
    current: '',
    status: 403,
    body: html`<p>You need the admin scope to use the gateway's operator pages.</p>
      <p class="muted">An operator grants it with <code>atrium user scopes ID admin</code>.</p>`,
  })
}

/** `Limit` of a list: default 100, clamped to 1..10000 (as the spec's UserFiles limit). */
export function listLimit(query: PageQuery): number {
  const value = Number.parseInt(query.Limit ?? '', 10)
  if (!Number.isFinite(value)) return 100
  return Math.min(10_000, Math.max(1, value))
}

/** A positive integer id from a query or form field, or undefined when absent or malformed. */
export function idField(text: string | undefined): number | undefined {
  if (text === undefined || !/^[1-9][0-9]{0,15}$/.test(text)) return undefined
  const value = Number(text)
  return Number.isSafeInteger(value) ? value : undefined
}

/** The link to the next page: the same filters, `FromTick` set to the last row's id, or none on the last page. */
export function nextPage(path: string, query: PageQuery, rows: { id: number }[], limit: number): string | undefined {
  if (rows.length < limit) return undefined
  return adminHref(path, { ...query, notice: undefined, error: undefined, FromTick: rows.at(-1)!.id })
}

/** A user as a person reads them: "Alice Archer (891241565626240)", or the bare id when unnamed or gone. */
export async function userLabels(users: Users, crmIds: number[]): Promise<Map<number, string>> {
  const wanted = [...new Set(crmIds)].filter((crmId) => crmId !== 0)
  const named = new Map((await users.getMany(wanted)).map((user) => [user.crm_id, user.name]))
  return new Map(wanted.map((crmId) => [crmId, named.get(crmId) ? `${named.get(crmId)} (${crmId})` : String(crmId)]))
}

export interface ActionResult {
  /** The action's inputs worth keeping in the audit (never a secret). */
  detail?: string
  /** The line shown on the page after the redirect. */
  notice: string
  /**
   * Answered instead of the redirect (200, never stored): a page that shows something once, e.g. a
   * new secret, which must not travel in a URL. The notice is its notice line.
   */
  page?: { title: string; current: string; body: ComponentChildren }
}

export interface OperatorAction {
  path: string
  /** Its name in the audit, e.g. `route.save`. */
  action: string
  /** What the form acts on, for the audit (a CRM id, a prefix…). */
  target: (form: Record<string, string>) => string
  /** The page to go back to. */
  back: (form: Record<string, string>) => string
  /** Does it; an ApiError's message becomes the page's error line and the audit's outcome. */
  perform: (form: Record<string, string>, request: FastifyRequest) => Promise<ActionResult>
}

/**
 * Registers an operator action: a form POST that runs `perform`, records the action in the audit
 * (with the error's message as its outcome when it fails), then redirects (303) to `back` with the
 * notice — Post/Redirect/Get, so a reload never repeats it. An action that shows a secret once
 * answers its page directly instead (see `ActionResult.page`).
 */
export function operatorAction(scope: FastifyInstance, context: AdminContext, spec: OperatorAction): void {
  scope.post(spec.path, { schema: actionBody }, async function runOperatorAction(request, reply) {
    const form = request.body as Record<string, string>
    const entry = { crmId: request.caller.crmId, action: spec.action, target: spec.target(form) }
    let notice: Record<string, string>
    try {
      const result = await spec.perform(form, request)
      await context.actions.record({ ...entry, detail: result.detail, outcome: 'ok' })
      if (result.page) {
        request.query = { notice: result.notice }
        return sendAdminPage(request, reply, result.page)
      }
      notice = { notice: result.notice }
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      await context.actions.record({ ...entry, outcome: error.message })
      notice = { error: error.message }
    }
    const back = spec.back(form)
    const separator = back.includes('?') ? '&' : '?'
    return reply
      .code(303)
      .header('location', `${back}${separator}${new URLSearchParams(notice)}`)
      .send()
  })
}
