import { type Service, timetickAt, timetickTime } from '@atrium/platform'
import { adminHref, adminTime, emptyState, html, LIVE_PARAM, liveRefresh, pager } from '@atrium/platform/admin'
import { Type } from 'typebox'
import type { AdminPageDeps } from './admin.plugin.ts'
import {
  ADMIN_ROOT,
  IdParam,
  limitOf,
  NoticeQuery,
  NumberParam,
  noticeOf,
  numberOf,
  personLabel,
  sendPage,
} from './admin-shell.ts'
import { runAction, takeEscalation } from './operator-actions.ts'

const ESCALATIONS = `${ADMIN_ROOT}/Escalations`
// A live monitor: customers keep writing while an operator watches.
const REFRESH_SECONDS = 30
const PREVIEW_LENGTH = 160

const escalationsQuery = Type.Object({
  Limit: NumberParam('Rows: default 100, clamped to 1..10000 (the longest waiting first).'),
  FromTick: IdParam('Cursor: chats waiting since after this tick (the next-page link carries it).'),
  ...NoticeQuery,
  [LIVE_PARAM]: Type.Optional(Type.Literal('1', { description: 'Reloads the page every 30 seconds.' })),
})
const takeForm = Type.Object({ ChatId: Type.String({ pattern: '^[0-9]{1,16}$' }) })

function waited(ms: number): string {
  const minutes = Math.floor(ms / 60_000)
  if (minutes < 1) return 'under a minute'
  if (minutes < 120) return `${minutes} min`
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

/**
 * /ChatAdmin/Escalations: support chats whose customer waits for an answer (support/), the
 * longest waiting first, overdue past Support.EscalateAfterSeconds; an operator takes one by
 * joining it as a team member.
 */
export function escalationsPage(app: Service, { store, support, now }: AdminPageDeps) {
  app.get(
    ESCALATIONS,
    { schema: { hide: true, querystring: escalationsQuery }, config: { envelope: false } },
    async (request, reply) => {
      const at = now()
      const limit = limitOf(request.query.Limit)
      const waiting = await store.escalations.waiting(
        timetickAt(at + 1),
        limit,
        undefined,
        numberOf(request.query.FromTick),
      )
      // The longest waiting come first, so the next page holds those waiting since later.
      const next =
        waiting.length === limit
          ? adminHref(ESCALATIONS, { Limit: request.query.Limit, FromTick: waiting.at(-1)!.waiting_since })
          : undefined
      const [names, messages, mine] = await Promise.all([
        store.profiles.names([...new Set(waiting.map((row) => row.customer))]),
        store.messages.findMany(waiting.map((row) => row.waiting_since)),
        store.members.memberships(request.operator),
      ])
      const contentOf = new Map(messages.map((message) => [message.timetick, message.content]))
      const joined = new Set(mine.map((row) => row.chat_id))
      const overdueAfter = support.EscalateAfterSeconds * 1000
      const body = html`
      <p>Support chats whose customer wrote last, the longest waiting first.
        Overdue after ${support.EscalateAfterSeconds} seconds (Support.EscalateAfterSeconds).</p>
      ${
        waiting.length === 0
          ? emptyState(
              request.query.FromTick
                ? 'No more customers waiting after the previous page.'
                : 'No customer is waiting for an answer.',
            )
          : html`<table>
              <thead><tr><th>Customer</th><th>Waiting since</th><th>Waited</th><th class="num">Unanswered</th><th>First unanswered message</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                ${waiting.map((row) => {
                  const since = timetickTime(row.waiting_since)
                  const content = contentOf.get(row.waiting_since) ?? ''
                  return html`<tr>
                    <td><a href=${adminHref(`${ADMIN_ROOT}/ChatDetail`, { ChatId: row.chat_id })}>${personLabel(names, row.customer)}</a></td>
                    <td>${adminTime(since)}</td>
                    <td>${waited(at - since)}${at - since >= overdueAfter && html` <strong>overdue</strong>`}</td>
                    <td class="num">${row.unanswered}</td>
                    <td>${content.length > PREVIEW_LENGTH ? `${content.slice(0, PREVIEW_LENGTH)}…` : content}</td>
                    <td>${
                      joined.has(row.chat_id)
                        ? html`<a href=${`/chat/c/${row.chat_id}`}>Answer in chat</a>`
                        : html`<form method="post" action=${`${ESCALATIONS}/Take`} class="inline">
                            <input type="hidden" name="ChatId" value=${String(row.chat_id)} />
                            <button type="submit" aria-label=${`Take the conversation with ${personLabel(names, row.customer)}`}>Take</button>
                          </form>`
                    }</td>
                  </tr>`
                })}
              </tbody>
            </table>`
      }
      ${pager(next)}`
      return sendPage(reply, {
        title: 'Escalations',
        current: ESCALATIONS,
        body,
        notice: noticeOf(request.query),
        live: liveRefresh(ESCALATIONS, request.query, REFRESH_SECONDS),
      })
    },
  )

  app.post(
    `${ESCALATIONS}/Take`,
    { schema: { hide: true, body: takeForm }, config: { envelope: false } },
    async (request, reply) => {
      const chatId = request.body.ChatId
      const outcome = await runAction(
        store,
        { operator: request.operator, action: 'take_escalation', target: `chat:${chatId}` },
        takeEscalation(store, request.operator, Number(chatId)),
        now,
      )
      return reply.redirect(adminHref(ESCALATIONS, { Done: outcome.done, Failed: outcome.failed }), 303)
    },
  )
}
