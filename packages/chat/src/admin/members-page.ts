import { MemberRole, type Service, timetickTime } from '@atrium/platform'
import { adminHref, adminTime, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import { Type } from 'typebox'
import { currentRole } from '../members/personal-role.ts'
import type { AdminPageDeps } from './admin.plugin.ts'
import { ADMIN_ROOT, IdParam, limitOf, NumberParam, numberOf, personLabel, sendPage } from './admin-shell.ts'
import { chatTitle, pairPeople } from './chats-pages.ts'

const MEMBERS = `${ADMIN_ROOT}/Members`

const membersQuery = Type.Object({
  ChatId: IdParam('Members of this chat.'),
  MemberId: IdParam('Chats of this person (CRM or guest id).'),
  Limit: NumberParam('Rows per page: default 100, clamped to 1..10000.'),
  After: Type.Optional(
    Type.String({
      pattern: '^([0-9]{1,16}:[0-9]{1,16})?$',
      description: 'Cursor: `<chat id>:<member>` of the last row shown.',
    }),
  ),
})

function roleNames(row: { role: number; muted_until: number }): string {
  const role = currentRole(row, Date.now())
  const names: string[] = []
  if (role & MemberRole.Owner) names.push('Owner')
  if (role & MemberRole.Admin) names.push('Admin')
  if (names.length === 0) names.push('Member')
  if (role & MemberRole.Pinned) names.push('pinned')
  if (role & MemberRole.Hidden) names.push('hidden')
  if (role & MemberRole.Muted) names.push(row.muted_until ? `muted until ${adminTime(row.muted_until)}` : 'muted')
  return names.join(' · ')
}

/** /ChatAdmin/Members: memberships, optionally of one chat or of one person, in key order. */
export function membersPage(app: Service, { store, reads }: AdminPageDeps) {
  app.get(
    MEMBERS,
    { schema: { hide: true, querystring: membersQuery }, config: { envelope: false } },
    async (request, reply) => {
      const query = request.query
      const limit = limitOf(query.Limit)
      const after = query.After ? (query.After.split(':').map(Number) as [number, number]) : undefined
      const rows = await reads.members({
        chatId: numberOf(query.ChatId),
        member: numberOf(query.MemberId),
        after,
        limit,
      })
      const chats = await store.chats.findMany([...new Set(rows.map((row) => row.chat_id))])
      const names = await store.profiles.names([...new Set([...rows.map((row) => row.member), ...pairPeople(chats)])])
      const chatNames = new Map(chats.map((chat) => [chat.timetick, chatTitle(chat, names)]))
      const last = rows.at(-1)
      const next =
        rows.length === limit && last
          ? adminHref(MEMBERS, { ...query, After: `${last.chat_id}:${last.member}` })
          : undefined
      const body = html`
      ${filterForm(MEMBERS, [
        { name: 'ChatId', label: 'Chat id', value: query.ChatId ?? '' },
        { name: 'MemberId', label: 'Member id', value: query.MemberId ?? '' },
        { name: 'Limit', label: 'Rows', value: query.Limit ?? '', type: 'number', placeholder: '100' },
      ])}
      ${
        rows.length === 0
          ? emptyState('No membership matches. Give a chat id or a member id, or clear the filters.')
          : html`<table>
              <thead><tr><th>Chat</th><th>Member</th><th>Role</th><th>Joined</th><th>Last read</th></tr></thead>
              <tbody>
                ${rows.map(
                  (row) => html`<tr>
                    <td><a href=${adminHref(`${ADMIN_ROOT}/ChatDetail`, { ChatId: row.chat_id })}>${chatNames.get(row.chat_id) ?? row.chat_id}</a></td>
                    <td><a href=${adminHref(MEMBERS, { MemberId: row.member })}>${personLabel(names, row.member)}</a></td>
                    <td>${roleNames(row)}</td>
                    <td>${adminTime(timetickTime(row.joined))}</td>
                    <td>${row.last_read ? adminTime(timetickTime(row.last_read)) : html`<span class="muted">nothing yet</span>`}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
      }
      ${pager(next)}`
      return sendPage(reply, { title: 'Members', current: MEMBERS, body })
    },
  )
}
