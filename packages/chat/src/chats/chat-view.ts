import { ChatMessFlags, ChatType, hasFlag, MemberRole, shownName, timetickTime } from '@atrium/platform'
import { Type } from 'typebox'
import type { MemberRow } from '../members/members.repository.ts'
import { currentRole } from '../members/personal-role.ts'
import type { MessageRow } from '../messages/messages.repository.ts'
import { contextOf } from './chat-context.ts'
import type { ChatRow } from './chats.repository.ts'

/** Characters of a message's text that a chat list row shows. */
export const LIST_PREVIEW_LENGTH = 200

/** The chat's newest visible message as a chat list shows it (deleted messages are never it). */
export const LastMessagePreview = Type.Object({
  id: Type.String(),
  sender: Type.String(),
  sender_name: Type.String({ description: "The sender's profile name, '' when they have none." }),
  content: Type.String({
    description: `The text's first ${LIST_PREVIEW_LENGTH} characters; for a widget, ''; for a call, its whole call record (JSON).`,
  }),
  file_name: Type.String({ description: "The attached file's name, '' without one." }),
  flags: Type.Integer({ description: 'ChatMessFlags of the message (File, Widget, Call …).' }),
  edited: Type.Boolean(),
  time: Type.String(),
})

export const ChatView = Type.Object({
  id: Type.String(),
  type: Type.Integer({ description: 'ChatType flag: 1 private, 2 group, 4 info channel.' }),
  name: Type.String(),
  description: Type.String(),
  owner: Type.String(),
  peer: Type.String({ description: 'For a private chat, the other participant; otherwise "0".' }),
  archived: Type.Boolean(),
  role: Type.Integer({ description: "The caller's MemberRole flags." }),
  pinned: Type.Boolean(),
  hidden: Type.Boolean(),
  muted: Type.Boolean({
    description:
      'The caller muted the chat (MemberRole.Muted, beyond the spec): no push or Telegram notification for it.',
  }),
  muted_until: Type.String({ description: "When the caller's mute ends; '' when not muted or muted with no end." }),
  member_count: Type.Integer(),
  unread: Type.Integer(),
  last_message: Type.String(),
  last_message_preview: Type.Union([LastMessagePreview, Type.Null()], {
    description: 'The newest visible message (last_message) for a list row; null when the chat has none.',
  }),
  created: Type.String(),
  timetick_update: Type.String(),
  context: Type.Union([Type.Literal(''), Type.Literal('support'), Type.Literal('discussion')], {
    description: "The client context: '' for an ordinary chat, 'support' or 'discussion'.",
  }),
  customer: Type.String({ description: 'For a support chat, the CRM id of the customer it serves; otherwise "0".' }),
  object_type: Type.Integer({
    description: 'For a discussion, the FeedbackType of the object discussed; otherwise 0.',
  }),
  object_id: Type.String({ description: "For a discussion, the id of the object discussed; otherwise ''." }),
})

export interface ChatViewContext {
  membership: MemberRow
  memberCount: number
  unread: number
  /** Display name of the other participant of a private chat, '' when unknown. */
  peerName: string
  /** Display name of a support chat's customer, '' when unknown. */
  customerName?: string
  /** The chat's newest visible message (its last_message row) and its sender's name. */
  lastMessage?: { row: MessageRow; senderName: string } | undefined
}

/** A chat list row's preview of a message. */
export function toLastMessagePreview(row: MessageRow, senderName: string) {
  const widget = hasFlag(row.flags, ChatMessFlags.Widget)
  return {
    id: String(row.timetick),
    sender: String(row.owner),
    sender_name: senderName,
    // A call row's content is its whole call record (a few hundred characters), which the list words.
    content: widget
      ? ''
      : hasFlag(row.flags, ChatMessFlags.Call)
        ? row.content
        : row.content.slice(0, LIST_PREVIEW_LENGTH),
    file_name: hasFlag(row.flags, ChatMessFlags.File) ? row.file_name : '',
    flags: row.flags,
    edited: row.edited !== 0,
    time: new Date(timetickTime(row.timetick)).toISOString(),
  }
}

/** The other participant of a private chat, from its pair key. */
export function peerOf(chat: ChatRow, member: number): number {
  if (chat.type !== ChatType.Private) return 0
  const [low, high] = chat.pair_key.split(':').map(Number)
  return low === member ? (high ?? 0) : (low ?? 0)
}

/** A chat's name for the member: the peer of a private chat; the customer of a support chat for its team. */
function nameFor(chat: ChatRow, member: number, peer: number, { peerName, customerName = '' }: ChatViewContext) {
  if (chat.type === ChatType.Private) return shownName(peer, peerName)
  const { context, customer } = contextOf(chat)
  if (context === 'support' && customer !== member) return `${chat.name}: ${shownName(customer, customerName)}`
  return chat.name
}

/**
 * Shapes a chat as the caller sees it. A private chat is named after the other participant
 * (spec: "Chat type flags"): the name others see them by (shownName, docs/people.md). The support
 * team sees a support chat named after its customer.
 */
export function toChatView(chat: ChatRow, view: ChatViewContext) {
  const { membership, memberCount, unread, lastMessage } = view
  const peer = peerOf(chat, membership.member)
  const context = contextOf(chat)
  const role = currentRole(membership, Date.now())
  const muted = (role & MemberRole.Muted) !== 0
  return {
    id: String(chat.timetick),
    type: chat.type,
    name: nameFor(chat, membership.member, peer, view),
    description: chat.description,
    owner: String(chat.owner),
    peer: String(peer),
    archived: chat.archived === 1,
    role,
    pinned: (role & MemberRole.Pinned) !== 0,
    hidden: (role & MemberRole.Hidden) !== 0,
    muted,
    muted_until: muted && membership.muted_until !== 0 ? new Date(membership.muted_until).toISOString() : '',
    member_count: memberCount,
    unread,
    last_message: String(chat.last_message),
    last_message_preview: lastMessage ? toLastMessagePreview(lastMessage.row, lastMessage.senderName) : null,
    created: new Date(timetickTime(chat.timetick)).toISOString(),
    timetick_update: String(chat.timetick_update),
    context: context.context,
    customer: String(context.customer),
    object_type: context.objectType,
    object_id: context.objectId,
  }
}

/** The event data of a chat (ChatCreated, ChatUpdated, ChatArchived). */
export function toChatEventData(chat: ChatRow) {
  return {
    chat_id: String(chat.timetick),
    type: chat.type,
    name: chat.name,
    description: chat.description,
    owner: String(chat.owner),
    archived: chat.archived === 1,
    members: chat.type === ChatType.Private ? chat.pair_key.split(':') : undefined,
  }
}
