import { adminHref, adminTime, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import type { LoginAudit, LoginAuditFilter } from '../audit/login-audit.repository.ts'
import {
  ADMIN_ROOT,
  type AdminContext,
  idField,
  listLimit,
  nextPage,
  type PageQuery,
  pageQuery,
  sendAdminPage,
  userLabels,
} from './admin-shell.ts'

export interface LoginAuditPageOptions extends AdminContext {
  loginAudit: LoginAudit
}

const PAGE = `${ADMIN_ROOT}/LoginAudit`

/** A `datetime-local` value (read as UTC) in epoch milliseconds, or undefined when empty or malformed. */
function utcTime(text: string | undefined): number | undefined {
  if (!text || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text)) return undefined
  const ms = Date.parse(`${text}Z`)
  return Number.isNaN(ms) ? undefined : ms
}

/** The repository filter a page's query names; unknown or malformed values filter nothing. */
function auditFilter(query: PageQuery, limit: number): LoginAuditFilter {
  const country = (query.Country ?? '').trim().toUpperCase()
  return {
    crmId: idField(query.User),
    ip: query.Ip?.trim() || undefined,
    country: /^[A-Z]{2}$/.test(country) ? country : undefined,
    success: query.Result === 'success' ? true : query.Result === 'failure' ? false : undefined,
    from: utcTime(query.From),
    to: utcTime(query.To),
    before: idField(query.FromTick),
    limit,
  }
}

/** /ProxyAdmin/LoginAudit: every sign-in attempt, newest first, filtered by user, IP, country, time and result. */
export default async function loginAuditPage(app: FastifyInstance, { loginAudit, users }: LoginAuditPageOptions) {
  app.get(PAGE, { schema: pageQuery }, async (request, reply) => {
    const query = request.query as PageQuery
    const limit = listLimit(query)
    const rows = await loginAudit.query(auditFilter(query, limit))
    const names = await userLabels(
      users,
      rows.map((row) => row.crm_id),
    )
    return sendAdminPage(request, reply, {
      title: 'Login audit',
      current: PAGE,
      body: html`
        ${filterForm(PAGE, [
          { name: 'User', label: 'User (CRM id)', value: query.User ?? '' },
          { name: 'Ip', label: 'IP address', value: query.Ip ?? '' },
          { name: 'Country', label: 'Country', value: query.Country ?? '', placeholder: 'DE' },
          { name: 'From', label: 'From (UTC)', value: query.From ?? '', type: 'datetime-local' },
          { name: 'To', label: 'Before (UTC)', value: query.To ?? '', type: 'datetime-local' },
          {
            name: 'Result',
            label: 'Result',
            value: query.Result ?? '',
            options: [
              ['', 'Any'],
              ['success', 'Signed in'],
              ['failure', 'Refused'],
            ],
          },
        ])}
        ${
          rows.length === 0
            ? emptyState('No sign-in attempt matches these filters.')
            : html`<table>
              <thead><tr><th>When</th><th>User</th><th>Method</th><th>Result</th><th>IP address</th><th>Country</th>
                <th>Browser</th><th>Device</th></tr></thead>
              <tbody>${rows.map(
                (row) => html`<tr>
                  <td>${adminTime(row.created)}</td>
                  <td>${
                    row.crm_id === 0
                      ? html`<span class="muted">unknown</span>`
                      : html`<a href=${adminHref(`${ADMIN_ROOT}/UserDetail`, { CrmId: row.crm_id })}>${names.get(row.crm_id)}</a>`
                  }</td>
                  <td>${row.method}</td>
                  <td>${row.success ? 'signed in' : `refused: ${row.reason}`}</td>
                  <td>${row.ip}</td>
                  <td>${row.country}</td>
                  <td class="muted">${row.user_agent}</td>
                  <td class="muted">${[row.screen, row.timezone, row.language].filter(Boolean).join(' · ')}</td>
                </tr>`,
              )}</tbody>
            </table>`
        }
        ${pager(nextPage(PAGE, query, rows, limit))}
      `,
    })
  })
}
