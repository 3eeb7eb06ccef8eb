import type { Service } from '@atrium/platform'
import { adminHref, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import { Type } from 'typebox'
import type { AdminPageDeps } from './admin.plugin.ts'
import {
  ADMIN_ROOT,
  DateParam,
  FlagParam,
  flagOf,
  IdParam,
  ListQuery,
  limitOf,
  NoticeQuery,
  noticeOf,
  numberOf,
  sendPage,
  tickRange,
} from './admin-shell.ts'
import { chatTitle, pairPeople } from './chats-pages.ts'
import { messageTable } from './message-table.ts'

const MESSAGES = `${ADMIN_ROOT}/Messages`

const messagesQuery = Type.Object({
  ChatId: IdParam('Messages of this chat.'),
  OwnerId: IdParam('Messages written by this person (CRM id).'),
  Timetick: IdParam('This one message.'),
  DateFrom: DateParam('Written at or after (UTC).'),
  DateTo: DateParam('Written before the end of this day, or before this instant (UTC).'),
  ShowDeleted: FlagParam('true: soft-deleted messages too.'),
  ...ListQuery,
  ...NoticeQuery,
})

/** /ChatAdmin/Messages: every message row, newest first, by chat, writer, id or date; each live row can be deleted. */
export function messagesPages(app: Service, { store, reads }: AdminPageDeps) {
  app.get(
    MESSAGES,
    { schema: { hide: true, querystring: messagesQuery }, config: { envelope: false } },
    async (request, reply) => {
      const query = request.query
      const limit = limitOf(query.Limit)
      const dates = tickRange(query.DateFrom, query.DateTo)
      const rows = await reads.messages({
        chatId: numberOf(query.ChatId),
        ownerId: numberOf(query.OwnerId),
        timetick: numberOf(query.Timetick),
        createdMin: dates.min,
        createdBelow: dates.below,
        showDeleted: flagOf(query.ShowDeleted),
        fromTick: numberOf(query.FromTick),
        limit,
      })
      const chats = await store.chats.findMany([...new Set(rows.map((row) => row.chat_id))])
      const names = await store.profiles.names([...new Set([...rows.map((row) => row.owner), ...pairPeople(chats)])])
      const chatNames = new Map(chats.map((chat) => [chat.timetick, chatTitle(chat, names)]))
      const { Done: _done, Failed: _failed, ...filters } = query
      const next =
        rows.length === limit ? adminHref(MESSAGES, { ...filters, FromTick: rows.at(-1)!.timetick }) : undefined
      const body = html`
      ${filterForm(MESSAGES, [
        { name: 'ChatId', label: 'Chat id', value: query.ChatId ?? '' },
        { name: 'OwnerId', label: 'Writer (CRM id)', value: query.OwnerId ?? '' },
        { name: 'Timetick', label: 'Message id', value: query.Timetick ?? '' },
        { name: 'DateFrom', label: 'From (UTC)', value: query.DateFrom ?? '', type: 'date' },
        { name: 'DateTo', label: 'To (UTC)', value: query.DateTo ?? '', type: 'date' },
        {
          name: 'ShowDeleted',
          label: 'Show deleted',
          value: flagOf(query.ShowDeleted) ? 'true' : '',
          type: 'checkbox',
        },
        { name: 'Limit', label: 'Rows', value: query.Limit ?? '', type: 'number', placeholder: '100' },
      ])}
      ${
        rows.length === 0
          ? emptyState('No message matches these filters. Clear them, or tick "Show deleted".')
          : messageTable(rows, names, { chats: chatNames, deleteAction: `${ADMIN_ROOT}/ChatDetail/DeleteMessage` })
      }
      ${pager(next)}`
      return sendPage(reply, { title: 'Messages', current: MESSAGES, body, notice: noticeOf(query) })
    },
  )
}
