import { ChatType, MemberRole, parseTimetick, type Service, timetickTime } from '@atrium/platform'
import { adminHref, adminTime, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import { Type } from 'typebox'
import { contextOf } from '../chats/chat-context.ts'
import type { ChatRow } from '../chats/chats.repository.ts'
import type { AdminPageDeps } from './admin.plugin.ts'
import { CHAT_FLAGS, type ChatFlagFilter } from './admin-reads.repository.ts'
import {
  ADMIN_ROOT,
  DateParam,
  ListQuery,
  limitOf,
  NoticeQuery,
  noticeOf,
  numberOf,
  personLabel,
  sendPage,
  TextParam,
  tickRange,
} from './admin-shell.ts'
import { messageTable } from './message-table.ts'
import { deleteMessage, removeMember, runAction, setArchived } from './operator-actions.ts'

const CHATS = `${ADMIN_ROOT}/Chats`
const DETAIL = `${ADMIN_ROOT}/ChatDetail`
// The detail page shows the newest messages and the first members; the other pages list the rest.
const DETAIL_MESSAGES = 20
const DETAIL_MEMBERS = 50

const chatsQuery = Type.Object({
  Flags: Type.Optional(Type.Union([...CHAT_FLAGS.map((flag) => Type.Literal(flag)), Type.Literal('')])),
  Name: TextParam('Substring of the chat name (case-sensitive).'),
  DateFrom: DateParam('Created at or after (UTC).'),
  DateTo: DateParam('Created before the end of this day, or before this instant (UTC).'),
  ...ListQuery,
})

const detailQuery = Type.Object({ ChatId: Type.Optional(Type.String({ maxLength: 40 })), ...NoticeQuery })

const archiveForm = Type.Object({
  ChatId: Type.String({ pattern: '^[0-9]{1,16}$' }),
  Archived: Type.Union([Type.Literal('true'), Type.Literal('false')]),
})
const removeMemberForm = Type.Object({
  ChatId: Type.String({ pattern: '^[0-9]{1,16}$' }),
  Member: Type.String({ pattern: '^[0-9]{1,16}$' }),
})
const deleteMessageForm = Type.Object({ MessageId: Type.String({ pattern: '^[0-9]{1,16}$' }) })

const TYPE_NAMES: Record<number, string> = {
  [ChatType.Private]: 'Private',
  [ChatType.Group]: 'Group',
  [ChatType.InfoChannel]: 'Info channel',
}

/** "Group", "Private · archived", "Group · support". */
export function chatKind(chat: ChatRow): string {
  const parts = [TYPE_NAMES[chat.type] ?? `Type ${chat.type}`]
  const context = contextOf(chat).context
  if (context) parts.push(context)
  if (chat.archived) parts.push('archived')
  return parts.join(' · ')
}

/** A chat's name as an operator reads it: its name, or for a private chat its two people. */
export function chatTitle(chat: ChatRow, names: Map<number, string>): string {
  if (chat.name) return chat.name
  if (chat.type === ChatType.Private) {
    const [a, b] = chat.pair_key.split(':').map(Number)
    if (a && b) return `${names.get(a) || a} and ${names.get(b) || b}`
  }
  return `Chat ${chat.timetick}`
}

/** The people a private chat's pair key names, to look their names up. */
export function pairPeople(chats: ChatRow[]): number[] {
  return chats
    .flatMap((chat) => (chat.type === ChatType.Private ? chat.pair_key.split(':').map(Number) : []))
    .filter(Boolean)
}

/** /ChatAdmin/Chats and /ChatAdmin/ChatDetail with the detail's actions (archive, remove a member, delete a message). */
export function chatsPages(app: Service, { store, reads, now }: AdminPageDeps) {
  app.get(
    CHATS,
    { schema: { hide: true, querystring: chatsQuery }, config: { envelope: false } },
    async (request, reply) => {
      const query = request.query
      const limit = limitOf(query.Limit)
      const dates = tickRange(query.DateFrom, query.DateTo)
      const rows = await reads.chats({
        flag: (query.Flags || undefined) as ChatFlagFilter | undefined,
        name: query.Name || undefined,
        createdMin: dates.min,
        createdBelow: dates.below,
        fromTick: numberOf(query.FromTick),
        limit,
      })
      const names = await store.profiles.names([...new Set([...rows.map((chat) => chat.owner), ...pairPeople(rows)])])
      const counts = await store.members.countMany(rows.map((chat) => chat.timetick))
      const next = rows.length === limit ? adminHref(CHATS, { ...query, FromTick: rows.at(-1)!.timetick }) : undefined
      const body = html`
      ${filterForm(CHATS, [
        {
          name: 'Flags',
          label: 'Kind',
          value: query.Flags ?? '',
          options: [
            ['', 'Any'],
            ['private', 'Private'],
            ['group', 'Group'],
            ['channel', 'Info channel'],
            ['archived', 'Archived'],
          ],
        },
        { name: 'Name', label: 'Name contains', value: query.Name ?? '' },
        { name: 'DateFrom', label: 'Created from (UTC)', value: query.DateFrom ?? '', type: 'date' },
        { name: 'DateTo', label: 'Created to (UTC)', value: query.DateTo ?? '', type: 'date' },
        { name: 'Limit', label: 'Rows', value: query.Limit ?? '', type: 'number', placeholder: '100' },
      ])}
      ${
        rows.length === 0
          ? emptyState('No chat matches these filters. Clear them to see every chat.')
          : html`<table>
              <thead><tr><th>Chat</th><th>Kind</th><th>Owner</th><th class="num">Members</th><th>Created</th><th>Last message</th></tr></thead>
              <tbody>
                ${rows.map(
                  (chat) => html`<tr>
                    <td><a href=${adminHref(DETAIL, { ChatId: chat.timetick })}>${chatTitle(chat, names)}</a></td>
                    <td>${chatKind(chat)}</td>
                    <td>${personLabel(names, chat.owner)}</td>
                    <td class="num">${counts.get(chat.timetick) ?? 0}</td>
                    <td>${adminTime(timetickTime(chat.timetick))}</td>
                    <td>${chat.last_message ? adminTime(timetickTime(chat.last_message)) : html`<span class="muted">none</span>`}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
      }
      ${pager(next)}`
      return sendPage(reply, { title: 'Chats', current: CHATS, body })
    },
  )

  app.get(
    DETAIL,
    { schema: { hide: true, querystring: detailQuery }, config: { envelope: false } },
    async (request, reply) => {
      // Spec ("Errors" 2): an invalid or missing ChatId goes back to the list.
      const chatId = parseTimetick(request.query.ChatId ?? '')
      const chat = chatId ? await store.chats.find(chatId) : undefined
      if (!chat) return reply.redirect(CHATS, 303)
      const [members, messages] = await Promise.all([
        reads.members({ chatId: chat.timetick, limit: DETAIL_MEMBERS }),
        reads.messages({ chatId: chat.timetick, showDeleted: true, limit: DETAIL_MESSAGES }),
      ])
      const names = await store.profiles.names([
        ...new Set([
          chat.owner,
          ...pairPeople([chat]),
          ...members.map((row) => row.member),
          ...messages.map((row) => row.owner),
        ]),
      ])
      const memberCount = await store.members.count(chat.timetick)
      const context = contextOf(chat)
      const body = html`
      <dl class="fields">
        <dt>Id</dt><dd><code>${chat.timetick}</code></dd>
        <dt>Kind</dt><dd>${chatKind(chat)}</dd>
        <dt>Owner</dt><dd>${personLabel(names, chat.owner)}</dd>
        ${chat.description && html`<dt>Description</dt><dd>${chat.description}</dd>`}
        ${context.context === 'support' && html`<dt>Customer</dt><dd>${personLabel(names, context.customer)}</dd>`}
        <dt>Created</dt><dd>${adminTime(timetickTime(chat.timetick))}</dd>
        <dt>Last change</dt><dd>${adminTime(timetickTime(chat.timetick_update))}</dd>
        <dt>Members</dt><dd>${memberCount}</dd>
      </dl>
      <form method="post" action=${`${DETAIL}/Archive`} class="inline">
        <input type="hidden" name="ChatId" value=${String(chat.timetick)} />
        <input type="hidden" name="Archived" value=${chat.archived ? 'false' : 'true'} />
        <p><button type="submit" class=${chat.archived ? 'secondary' : 'danger'}>${chat.archived ? 'Unarchive chat' : 'Archive chat'}</button>${' '}
        An archived chat is read-only for its members.</p>
      </form>
      <h2>Members</h2>
      <table>
        <thead><tr><th>Member</th><th>Role</th><th>Joined</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
          ${members.map(
            (row) => html`<tr>
              <td>${personLabel(names, row.member)}</td>
              <td>${roleName(row.role)}</td>
              <td>${adminTime(timetickTime(row.joined))}</td>
              <td>${
                (row.role & MemberRole.Owner) === 0 &&
                html`<form method="post" action=${`${DETAIL}/RemoveMember`} class="inline">
                  <input type="hidden" name="ChatId" value=${String(chat.timetick)} />
                  <input type="hidden" name="Member" value=${String(row.member)} />
                  <button type="submit" class="danger" aria-label=${`Remove ${personLabel(names, row.member)}`}>Remove</button>
                </form>`
              }</td>
            </tr>`,
          )}
        </tbody>
      </table>
      ${memberCount > members.length && html`<p class="pager"><a href=${adminHref(`${ADMIN_ROOT}/Members`, { ChatId: chat.timetick })}>All ${memberCount} members →</a></p>`}
      <h2>Newest messages</h2>
      ${
        messages.length === 0
          ? emptyState('No messages in this chat yet.')
          : messageTable(messages, names, { deleteAction: `${DETAIL}/DeleteMessage` })
      }
      <p class="pager"><a href=${adminHref(`${ADMIN_ROOT}/Messages`, { ChatId: chat.timetick, ShowDeleted: true })}>All messages of this chat →</a></p>`
      return sendPage(reply, {
        title: chatTitle(chat, names),
        current: CHATS,
        body,
        notice: noticeOf(request.query),
      })
    },
  )

  const back = (chatId: string, outcome: { done?: string; failed?: string }) =>
    adminHref(DETAIL, { ChatId: chatId, Done: outcome.done, Failed: outcome.failed })

  app.post(
    `${DETAIL}/Archive`,
    { schema: { hide: true, body: archiveForm }, config: { envelope: false } },
    async (request, reply) => {
      const { ChatId, Archived } = request.body
      const archived = Archived === 'true'
      const outcome = await runAction(
        store,
        { operator: request.operator, action: archived ? 'archive_chat' : 'unarchive_chat', target: `chat:${ChatId}` },
        setArchived(store, Number(ChatId), archived),
        now,
      )
      return reply.redirect(
        outcome.failed === 'chat-not-found' ? adminHref(CHATS, { Failed: outcome.failed }) : back(ChatId, outcome),
        303,
      )
    },
  )

  app.post(
    `${DETAIL}/RemoveMember`,
    { schema: { hide: true, body: removeMemberForm }, config: { envelope: false } },
    async (request, reply) => {
      const { ChatId, Member } = request.body
      const outcome = await runAction(
        store,
        { operator: request.operator, action: 'remove_member', target: `chat:${ChatId}`, detail: `member:${Member}` },
        removeMember(request.operator, Number(ChatId), Number(Member)),
        now,
      )
      return reply.redirect(
        outcome.failed === 'chat-not-found' ? adminHref(CHATS, { Failed: outcome.failed }) : back(ChatId, outcome),
        303,
      )
    },
  )

  app.post(
    `${DETAIL}/DeleteMessage`,
    { schema: { hide: true, body: deleteMessageForm }, config: { envelope: false } },
    async (request, reply) => {
      const messageId = Number(request.body.MessageId)
      const message = await store.messages.find(messageId)
      const outcome = await runAction(
        store,
        {
          operator: request.operator,
          action: 'delete_message',
          target: `message:${messageId}`,
          detail: message ? `chat:${message.chat_id}` : '',
        },
        deleteMessage(store, messageId),
        now,
      )
      if (!message) return reply.redirect(adminHref(`${ADMIN_ROOT}/Messages`, { Failed: outcome.failed }), 303)
      return reply.redirect(back(String(message.chat_id), outcome), 303)
    },
  )
}

function roleName(role: number): string {
  if (role & MemberRole.Owner) return 'Owner'
  if (role & MemberRole.Admin) return 'Admin'
  return 'Member'
}
