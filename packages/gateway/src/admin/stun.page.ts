import { adminHref, adminTime, emptyState, filterForm, html, liveRefresh, pager } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import type { StunReports } from '../stun/stun-reports.repository.ts'
import type { StunResponder } from '../stun/stun-responder.ts'
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

export interface StunPageOptions extends AdminContext {
  responder: StunResponder
  stunReports: StunReports
  /** Stun.Enabled. */
  stunEnabled: boolean
}

const PAGE = `${ADMIN_ROOT}/StunMonitor`
const REFRESH_SECONDS = 10

/** The parts of a stored report (POST /auth/v1/stun/report) the monitor shows; the body was checked on the way in. */
interface StoredReport {
  candidates?: { type?: string; protocol?: string; address?: string; port?: number }[]
  mappedAddress?: { address: string; port: number }
  gatheringMs?: number
  stunRttMs?: number
  errors?: { url: string; code: number; text: string }[]
}

function readReport(text: string): StoredReport {
  try {
    return JSON.parse(text) as StoredReport
  } catch {
    return {}
  }
}

function candidateSummary(report: StoredReport): string {
  const byType = new Map<string, number>()
  for (const candidate of report.candidates ?? []) {
    const type = candidate.type ?? '?'
    byType.set(type, (byType.get(type) ?? 0) + 1)
  }
  return [...byType].map(([type, count]) => `${count} ${type}`).join(', ') || 'none'
}

/**
 * /ProxyAdmin/StunMonitor (spec "Endpoints"): the embedded STUN responder's sockets and packet
 * counters, and the clients' ICE reports (POST /auth/v1/stun/report), newest first. Refreshes itself
 * once the operator turns that on.
 */
export default async function stunPage(app: FastifyInstance, options: StunPageOptions) {
  const { responder, stunReports, stunEnabled, users } = options

  app.get(PAGE, { schema: pageQuery }, async (request, reply) => {
    const query = request.query as PageQuery
    const limit = listLimit(query)
    const rows = await stunReports.page({ crmId: idField(query.User), before: idField(query.FromTick), limit })
    const names = await userLabels(
      users,
      rows.map((row) => row.crm_id),
    )
    const counts = responder.counts()
    const sockets = responder.addresses()
    const threads = responder.threads().length
    return sendAdminPage(request, reply, {
      title: 'STUN monitor',
      current: PAGE,
      live: liveRefresh(PAGE, query, REFRESH_SECONDS),
      body: html`
        <div class="cards">
          <div class="card"><div class="value">${stunEnabled ? (sockets.length > 0 ? 'Listening' : 'Not bound') : 'Off'}</div>
            <div class="label">${sockets.map((socket) => `${socket.address} UDP ${socket.port}`).join(', ') || 'No UDP socket'}${
              threads > 0 ? ` · ${threads} threads` : ''
            }</div></div>
          <div class="card"><div class="value">${String(counts.answered)}</div><div class="label">Binding requests answered</div></div>
          <div class="card"><div class="value">${String(counts.unknownAttributes)}</div><div class="label">Answered 420 (unknown attributes)</div></div>
          <div class="card"><div class="value">${String(counts.dropped)}</div><div class="label">Packets dropped</div></div>
        </div>
        <h2>Client reports</h2>
        ${filterForm(PAGE, [{ name: 'User', label: 'User (CRM id)', value: query.User ?? '' }])}
        ${
          rows.length === 0
            ? emptyState(
                'No client has reported its ICE gathering yet. The web client reports when a call starts; reports appear here.',
              )
            : html`<table>
              <thead><tr><th>When</th><th>User</th><th>From</th><th>Mapped address</th><th>Candidates</th>
                <th class="num">Gathering</th><th class="num">STUN round trip</th><th>Errors</th></tr></thead>
              <tbody>${rows.map((row) => {
                const report = readReport(row.report)
                return html`<tr>
                  <td>${adminTime(row.created)}</td>
                  <td><a href=${adminHref(`${ADMIN_ROOT}/UserDetail`, { CrmId: row.crm_id })}>${names.get(row.crm_id)}</a></td>
                  <td>${row.ip}</td>
                  <td>${report.mappedAddress ? `${report.mappedAddress.address}:${report.mappedAddress.port}` : '—'}</td>
                  <td>${candidateSummary(report)}</td>
                  <td class="num">${report.gatheringMs === undefined ? '' : `${report.gatheringMs} ms`}</td>
                  <td class="num">${report.stunRttMs === undefined ? '—' : `${report.stunRttMs} ms`}</td>
                  <td>${(report.errors ?? []).map((error) => `${error.code} ${error.text}`).join('; ')}</td>
                </tr>`
              })}</tbody>
            </table>`
        }
        ${pager(nextPage(PAGE, query, rows, limit))}
      `,
    })
  })
}
