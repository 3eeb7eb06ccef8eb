import { adminHref, adminTime, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import { isAuthenticated } from '../auth/caller.ts'
import type { AdminActions } from './admin-actions.repository.ts'
import {
  ADMIN_ROOT,
  type AdminContext,
  idField,
  listLimit,
  nextPage,
  OPERATOR_SCOPE,
  type PageQuery,
  pageQuery,
  sendAdminPage,
  sendForbidden,
  userLabels,
} from './admin-shell.ts'
import appsPage, { type AppsPageOptions } from './apps.page.ts'
import cataloguePage, { type CataloguePageOptions } from './catalogue.page.ts'
import loginAuditPage, { type LoginAuditPageOptions } from './login-audit.page.ts'
import pushPage, { type PushPageOptions } from './push.page.ts'
import routesPage, { type RoutesPageOptions } from './routes.page.ts'
import settingsPage, { type SettingsPageOptions } from './settings.page.ts'
import stunPage, { type StunPageOptions } from './stun.page.ts'
import usersPage, { type UsersPageOptions } from './users.page.ts'

export interface AdminPluginOptions
  extends AdminContext,
    Omit<UsersPageOptions, keyof AdminContext>,
    Omit<RoutesPageOptions, keyof AdminContext>,
    Omit<LoginAuditPageOptions, keyof AdminContext>,
    Omit<PushPageOptions, keyof AdminContext>,
    Omit<StunPageOptions, keyof AdminContext>,
    Omit<AppsPageOptions, keyof AdminContext>,
    Omit<CataloguePageOptions, keyof AdminContext>,
    Omit<SettingsPageOptions, keyof AdminContext> {
  actions: AdminActions
}

const FORM = 'application/x-www-form-urlencoded'
/** An action form carries a few short fields. */
const FORM_BODY_LIMIT = 16 * 1024

/**
 * /ProxyAdmin/: the gateway's operator panel (docs/admin.md), server-rendered, no script. Every
 * page and action needs a signed-in caller with the `admin` scope: anonymous callers are sent to
 * sign in (303), others get a 403 page. Actions are form posts, CSRF-checked by the gateway's hook
 * (auth/csrf.ts: PublicOrigin in Origin), recorded in the operator actions log and answered with a
 * redirect back to their page.
 */
export default async function adminPlugin(app: FastifyInstance, options: AdminPluginOptions) {
  // HTML pages, not API operations: no envelope, and left out of the OpenAPI document.
  app.addHook('onRoute', function rawPages(route) {
    route.config = { ...route.config, envelope: false }
    route.schema = { ...route.schema, hide: true }
  })
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, function parseForm(_, body, done) {
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })

  app.addHook('onRequest', async function requireOperator(request, reply) {
    const caller = request.caller
    // A person in a browser: a user's session with the scope, never an API key or an app token.
    if (caller.keyType === 'session' && caller.crmId !== 0 && caller.scopes.includes(OPERATOR_SCOPE)) return
    if (!isAuthenticated(caller)) {
      // After signing in, the browser comes back to the page (an action's page for a form post).
      const path = request.url.split('?')[0]!
      const page = request.method === 'GET' ? request.url : path.slice(0, path.lastIndexOf('/')) || ADMIN_ROOT
      return reply
        .code(303)
        .header('location', adminHref('/chat/sign-in', { next: page }))
        .send()
    }
    return sendForbidden(request, reply)
  })

  app.get(ADMIN_ROOT, async (_request, reply) => reply.code(303).header('location', `${ADMIN_ROOT}/Users`).send())
  app.get(`${ADMIN_ROOT}/`, async (_request, reply) => reply.code(303).header('location', `${ADMIN_ROOT}/Users`).send())

  const context: AdminContext = { actions: options.actions, users: options.users }
  await app.register(usersPage, options)
  await app.register(routesPage, options)
  await app.register(loginAuditPage, options)
  await app.register(pushPage, options)
  await app.register(stunPage, options)
  await app.register(appsPage, options)
  await app.register(cataloguePage, options)
  await app.register(settingsPage, options)
  actionsLogPage(app, context)
  // Any other path under the panel is the panel's, not the proxy's: Not Found in the shell.
  app.all(`${ADMIN_ROOT}/*`, async (request, reply) =>
    sendAdminPage(request, reply, {
      title: 'Not found',
      current: '',
      status: 404,
      body: html`<p>There is no such operator page. Pick one above.</p>`,
    }),
  )
}

/** /ProxyAdmin/Actions: the operator actions log, newest first, optionally by one operator. */
function actionsLogPage(app: FastifyInstance, { actions, users }: AdminContext) {
  const path = `${ADMIN_ROOT}/Actions`
  app.get(path, { schema: pageQuery }, async (request, reply) => {
    const query = request.query as PageQuery
    const limit = listLimit(query)
    const operator = idField(query.Operator)
    const rows = await actions.page({ crmId: operator, before: idField(query.FromTick), limit })
    const names = await userLabels(
      users,
      rows.map((row) => row.crm_id),
    )
    return sendAdminPage(request, reply, {
      title: 'Operator actions',
      current: path,
      body: html`
        ${filterForm(path, [{ name: 'Operator', label: 'Operator (CRM id)', value: query.Operator ?? '' }])}
        ${
          rows.length === 0
            ? emptyState('No operator action is recorded yet; each change made in these pages appears here.')
            : html`<table>
              <thead><tr><th>When</th><th>Operator</th><th>Action</th><th>Target</th><th>Detail</th><th>Outcome</th></tr></thead>
              <tbody>
                ${rows.map(
                  (row) => html`<tr>
                    <td>${adminTime(row.at)}</td>
                    <td>${names.get(row.crm_id) ?? String(row.crm_id)}</td>
                    <td><code>${row.action}</code></td>
                    <td><code>${row.target}</code></td>
                    <td class="muted">${row.detail}</td>
                    <td>${row.outcome}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
        }
        ${pager(nextPage(path, query, rows, limit))}
      `,
    })
  })
}
