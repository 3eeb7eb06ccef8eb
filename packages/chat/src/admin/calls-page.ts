import { type Service, timetickTime } from '@atrium/platform'
import { adminHref, adminTime, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import { Type } from 'typebox'
import { type CallMessageContent, recordOf } from '../calls/call-record.ts'
import type { MessageRow } from '../messages/messages.repository.ts'
import type { AdminPageDeps } from './admin.plugin.ts'
import { ADMIN_ROOT, IdParam, ListQuery, limitOf, numberOf, personLabel, sendPage } from './admin-shell.ts'

const CALLS = `${ADMIN_ROOT}/Calls`

const callsQuery = Type.Object({
  ChatId: IdParam('Calls in this chat.'),
  OwnerId: IdParam('Calls placed by this person (CRM id).'),
  ...ListQuery,
})

/** A call row's record, or undefined when its content is not one (never written by this module). */
function callOf(row: MessageRow): CallMessageContent | undefined {
  try {
    const record = recordOf(row)
    return typeof record === 'object' && record !== null && 'state' in record ? record : undefined
  } catch {
    return undefined
  }
}

/** "4 min 05 s", "12 s". */
function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`
}

/** /ChatAdmin/Calls: call message rows newest first: caller, callee, media, state, duration, end reason. */
export function callsPage(app: Service, { store, reads }: AdminPageDeps) {
  app.get(
    CALLS,
    { schema: { hide: true, querystring: callsQuery }, config: { envelope: false } },
    async (request, reply) => {
      const query = request.query
      const limit = limitOf(query.Limit)
      const rows = await reads.calls({
        chatId: numberOf(query.ChatId),
        ownerId: numberOf(query.OwnerId),
        fromTick: numberOf(query.FromTick),
        limit,
      })
      const calls = rows.map((row) => ({ row, call: callOf(row) }))
      const people = calls.flatMap(({ row, call }) => [row.owner, Number(call?.callee ?? 0)]).filter(Boolean)
      const names = await store.profiles.names([...new Set(people)])
      const next = rows.length === limit ? adminHref(CALLS, { ...query, FromTick: rows.at(-1)!.timetick }) : undefined
      const body = html`
      ${filterForm(CALLS, [
        { name: 'ChatId', label: 'Chat id', value: query.ChatId ?? '' },
        { name: 'OwnerId', label: 'Caller (CRM id)', value: query.OwnerId ?? '' },
        { name: 'Limit', label: 'Rows', value: query.Limit ?? '', type: 'number', placeholder: '100' },
      ])}
      ${
        rows.length === 0
          ? emptyState('No call matches these filters.')
          : html`<table>
              <thead><tr><th>Placed</th><th>Caller</th><th>Callee</th><th>Media</th><th>State</th><th class="num">Duration</th><th>End reason</th><th>Chat</th></tr></thead>
              <tbody>
                ${calls.map(
                  ({ row, call }) => html`<tr>
                    <td>${adminTime(timetickTime(row.timetick))}</td>
                    <td>${personLabel(names, row.owner)}</td>
                    <td>${call ? personLabel(names, Number(call.callee)) : ''}</td>
                    <td>${call?.media ?? ''}</td>
                    <td>${call?.state ?? html`<span class="muted">unreadable record</span>`}</td>
                    <td class="num">${call && call.duration > 0 ? duration(call.duration) : ''}</td>
                    <td>${call?.end_reason ?? ''}</td>
                    <td><a href=${adminHref(`${ADMIN_ROOT}/ChatDetail`, { ChatId: row.chat_id })}>${row.chat_id}</a></td>
                  </tr>`,
                )}
              </tbody>
            </table>`
      }
      ${pager(next)}`
      return sendPage(reply, { title: 'Calls', current: CALLS, body })
    },
  )
}
