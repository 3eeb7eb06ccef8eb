import { ChatMessFlags, hasFlag, LinkKind, timetickTime } from '@atrium/platform'
import { adminHref, adminTime, html } from '@atrium/platform/admin'
import type { VNode } from 'preact'
import type { MessageRow } from '../messages/messages.repository.ts'
import { ADMIN_ROOT, personLabel } from './admin-shell.ts'

// Long messages are cut in the table; the chat client shows them whole.
const PREVIEW_LENGTH = 160

/** What a chat_mess row is, in a word or two: "File", "Call", "Reaction", "Deleted · Text". */
export function messageKind(row: MessageRow): string {
  const parts: string[] = []
  if (hasFlag(row.flags, ChatMessFlags.Deleted)) parts.push('Deleted')
  if (hasFlag(row.flags, ChatMessFlags.Call)) parts.push('Call')
  else if (hasFlag(row.flags, ChatMessFlags.WidgetCommand)) parts.push('Widget command')
  else if (hasFlag(row.flags, ChatMessFlags.Widget)) parts.push('Widget')
  else if (row.link_kind === LinkKind.Reaction) parts.push('Reaction')
  else if (row.file_name || row.file_size || hasFlag(row.flags, ChatMessFlags.File)) parts.push('File')
  else parts.push('Text')
  if (hasFlag(row.flags, ChatMessFlags.Pin)) parts.push('pinned')
  if (hasFlag(row.flags, ChatMessFlags.Email)) parts.push('email')
  return parts.join(' · ')
}

function preview(row: MessageRow): string {
  const text = row.file_name ? `${row.file_name}${row.content ? ` — ${row.content}` : ''}` : row.content
  return text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH)}…` : text
}

export interface MessageTableOptions {
  /** The POST path of the delete form on each live row; no column when absent. */
  deleteAction?: string
  /** Show the chat column with a link to each row's chat. */
  chats?: Map<number, string>
}

/** A table of message rows, newest first, with sender names and an operator delete form per live row. */
export function messageTable(rows: MessageRow[], names: Map<number, string>, options: MessageTableOptions = {}): VNode {
  const { deleteAction, chats } = options
  return html`<table>
    <thead><tr>
      <th>Sent</th>${chats && html`<th>Chat</th>`}<th>From</th><th>Kind</th><th>Content</th>
      ${deleteAction && html`<th><span class="visually-hidden">Actions</span></th>`}
    </tr></thead>
    <tbody>
      ${rows.map(
        (row) => html`<tr>
          <td><a href=${adminHref(`${ADMIN_ROOT}/Messages`, { Timetick: row.timetick, ShowDeleted: true })}>${adminTime(timetickTime(row.timetick))}</a></td>
          ${chats && html`<td><a href=${adminHref(`${ADMIN_ROOT}/ChatDetail`, { ChatId: row.chat_id })}>${chats.get(row.chat_id) ?? row.chat_id}</a></td>`}
          <td>${personLabel(names, row.owner)}</td>
          <td>${messageKind(row)}</td>
          <td>${preview(row)}</td>
          ${
            deleteAction &&
            html`<td>${
              !hasFlag(row.flags, ChatMessFlags.Deleted) &&
              html`<form method="post" action=${deleteAction} class="inline">
                <input type="hidden" name="MessageId" value=${String(row.timetick)} />
                <button type="submit" class="danger" aria-label=${`Delete message ${row.timetick}`}>Delete</button>
              </form>`
            }</td>`
          }
        </tr>`,
      )}
    </tbody>
  </table>`
}
