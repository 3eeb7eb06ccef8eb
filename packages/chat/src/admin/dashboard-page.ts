import { ChatType, type Service, timetickAt } from '@atrium/platform'
import { adminHref, adminTime, emptyState, html } from '@atrium/platform/admin'
import type { AdminPageDeps } from './admin.plugin.ts'
import { ADMIN_ROOT, personLabel, sendPage } from './admin-shell.ts'

const DAY_MS = 86_400_000
const RECENT_ACTIONS = 20

/** /ChatAdmin: the panel's dashboard: chats by kind, the last day's activity, waiting customers, recent operator actions. */
export function dashboardPage(app: Service, { store, reads, now }: AdminPageDeps) {
  const handler = async (_request: unknown, reply: Parameters<typeof sendPage>[0]) => {
    const at = now()
    const [counts, activity, waiting, actions] = await Promise.all([
      reads.chatCounts(),
      reads.activitySince(timetickAt(at - DAY_MS)),
      store.escalations.waiting(timetickAt(at + 1), 1000),
      store.adminActions.recent(Number.MAX_SAFE_INTEGER, RECENT_ACTIONS),
    ])
    const names = await store.profiles.names([...new Set(actions.map((row) => Number(row.crm_id)))])
    const chatsOf = (type: number) => counts.filter((row) => row.type === type).reduce((sum, row) => sum + row.count, 0)
    const archived = counts.filter((row) => row.archived === 1).reduce((sum, row) => sum + row.count, 0)
    const card = (value: number, label: string, href: string) =>
      html`<div class="card"><div class="value">${value.toLocaleString('en')}</div><a class="label" href=${href}>${label}</a></div>`
    const body = html`
      <h2>Chats</h2>
      <div class="cards">
        ${card(chatsOf(ChatType.Private), 'Private chats', adminHref(`${ADMIN_ROOT}/Chats`, { Flags: 'private' }))}
        ${card(chatsOf(ChatType.Group), 'Groups', adminHref(`${ADMIN_ROOT}/Chats`, { Flags: 'group' }))}
        ${card(chatsOf(ChatType.InfoChannel), 'Info channels', adminHref(`${ADMIN_ROOT}/Chats`, { Flags: 'channel' }))}
        ${card(archived, 'Archived', adminHref(`${ADMIN_ROOT}/Chats`, { Flags: 'archived' }))}
      </div>
      <h2>Last 24 hours</h2>
      <div class="cards">
        ${card(activity.messages, 'Messages written', `${ADMIN_ROOT}/Messages`)}
        ${card(activity.files, 'Files shared', `${ADMIN_ROOT}/UserFiles`)}
        ${card(activity.calls, 'Calls placed', `${ADMIN_ROOT}/Calls`)}
        ${card(waiting.length, 'Customers waiting for support', `${ADMIN_ROOT}/Escalations`)}
      </div>
      <h2>Recent operator actions</h2>
      ${
        actions.length === 0
          ? emptyState('No operator has acted yet. Actions on chats, members, messages and escalations appear here.')
          : html`<table>
              <thead><tr><th>When</th><th>Operator</th><th>Action</th><th>Target</th><th>Outcome</th></tr></thead>
              <tbody>
                ${actions.map(
                  (row) => html`<tr>
                    <td>${adminTime(Number(row.at))}</td>
                    <td>${personLabel(names, Number(row.crm_id))}</td>
                    <td>${row.action}</td>
                    <td><code>${row.target}</code> ${row.detail && html`<span class="muted">${row.detail}</span>`}</td>
                    <td>${row.outcome}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
      }`
    return sendPage(reply, { title: 'Dashboard', current: ADMIN_ROOT, body })
  }
  app.get(ADMIN_ROOT, { schema: { hide: true }, config: { envelope: false } }, handler)
  app.get(`${ADMIN_ROOT}/`, { schema: { hide: true }, config: { envelope: false } }, handler)
}
