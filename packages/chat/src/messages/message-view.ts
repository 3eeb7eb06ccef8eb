import { ChatMessFlags, hasFlag, LinkKind, timetickTime } from '@atrium/platform'
import { Type } from 'typebox'
import type { MessageRow, ReactionSummary } from './messages.repository.ts'

const LINK_KINDS = { [LinkKind.None]: 'none', [LinkKind.Reply]: 'reply', [LinkKind.Reaction]: 'reaction' } as const

const PREVIEW_LENGTH = 200

export const ReplyPreview = Type.Object({
  id: Type.String(),
  owner: Type.String(),
  content: Type.String(),
  deleted: Type.Boolean(),
})

/** A message's attachment: its id in /auth/v1/file/{id}, and what its uploader declared. */
export const FileView = Type.Object({
  id: Type.String({ description: 'File id: GET /auth/v1/file/{id} downloads it.' }),
  name: Type.String(),
  size: Type.Integer({ description: 'Bytes.' }),
  type: Type.String({ description: "Content type the uploader declared; '' when unknown." }),
})

/** The attachment of a row, or null: a deleted message shows none. */
function fileOf(row: MessageRow) {
  if (!hasFlag(row.flags, ChatMessFlags.File) || hasFlag(row.flags, ChatMessFlags.Deleted)) return null
  return { id: String(row.file_id), name: row.file_name, size: row.file_size, type: row.file_type }
}

export const MessageView = Type.Object({
  id: Type.String(),
  chat_id: Type.String(),
  owner: Type.String(),
  content: Type.String(),
  flags: Type.Integer(),
  file: Type.Union([FileView, Type.Null()]),
  link_kind: Type.Union([Type.Literal('none'), Type.Literal('reply'), Type.Literal('reaction')]),
  linked_message_id: Type.String(),
  reply_to: Type.Union([ReplyPreview, Type.Null()]),
  reactions: Type.Array(Type.Object({ emoji: Type.String(), count: Type.Integer(), mine: Type.Boolean() })),
  forwarded_from: Type.String(),
  pinned: Type.Boolean(),
  deleted: Type.Boolean(),
  edited: Type.Boolean(),
  time: Type.String(),
  timetick_update: Type.String(),
})

export interface MessageContext {
  reactions?: ReactionSummary[]
  replyTo?: MessageRow
}

/** A reply's preview of its linked message: a deleted target shows no content. */
export function toReplyPreview(row: MessageRow) {
  const deleted = hasFlag(row.flags, ChatMessFlags.Deleted)
  return {
    id: String(row.timetick),
    owner: String(row.owner),
    content: deleted ? '' : row.content.slice(0, PREVIEW_LENGTH),
    deleted,
  }
}

/** Shapes a message row for clients; ids as strings, reactions aggregated, replies with a preview. */
export function toMessageView(row: MessageRow, { reactions = [], replyTo }: MessageContext = {}) {
  const deleted = hasFlag(row.flags, ChatMessFlags.Deleted)
  return {
    id: String(row.timetick),
    chat_id: String(row.chat_id),
    owner: String(row.owner),
    content: deleted ? '' : row.content,
    flags: row.flags,
    file: fileOf(row),
    link_kind: LINK_KINDS[row.link_kind as keyof typeof LINK_KINDS] ?? 'none',
    linked_message_id: String(row.linked_message_id),
    reply_to: replyTo ? toReplyPreview(replyTo) : null,
    reactions: reactions
      .filter((reaction) => reaction.message_id === row.timetick)
      .map(({ emoji, count, mine }) => ({ emoji, count, mine: mine === 1 })),
    forwarded_from: String(row.forwarded_from),
    pinned: hasFlag(row.flags, ChatMessFlags.Pin),
    deleted,
    edited: row.edited !== 0,
    time: new Date(timetickTime(row.timetick)).toISOString(),
    timetick_update: String(row.timetick_update),
  }
}

/** The event data of a message (spec: "Chat event data"): ids as strings. */
export function toMessageEventData(row: MessageRow) {
  const file = fileOf(row)
  return {
    message_id: String(row.timetick),
    chat_id: String(row.chat_id),
    sender: String(row.owner),
    content: row.content,
    flags: row.flags,
    link_kind: LINK_KINDS[row.link_kind as keyof typeof LINK_KINDS] ?? 'none',
    linked_message_id: String(row.linked_message_id),
    ...(file ? { file } : {}),
    time: new Date(timetickTime(row.timetick)).toISOString(),
  }
}
