import { ChatMessFlags } from '@atrium/platform/flags'
import type { UserView } from '../../api/auth-api.ts'
import type { ChatView, MessageView } from '../../api/chat-types.ts'
import { fallbackName, type PeopleNames } from '../../people/people-names.ts'

/** Chat type flags (spec: "Chat type flags"). */
export const ChatType = { Private: 1, Group: 2, InfoChannel: 4 } as const

/** Member role bits that may manage a chat (spec: Owner 1, Admin 2). */
const MANAGES = 1 | 2

/**
 * How a message's sender is named: "You", the peer of a private chat by the chat's name, others by
 * the name the client knows for them (PeopleNames, docs/people.md), else "User" and four digits.
 */
export function senderName(owner: string, chat: ChatView, me: UserView, names?: PeopleNames): string {
  return owner === me.crmId ? 'You' : memberName(owner, chat, names)
}

/** How another member of a chat is named: the peer of a private chat by the chat's name, others as senderName says. */
export function memberName(owner: string, chat: ChatView, names?: PeopleNames): string {
  if (chat.type === ChatType.Private && owner === chat.peer) return chat.name
  const known = names?.get(owner)
  if (known === undefined) names?.want([owner])
  return known ?? fallbackName(owner)
}

/** Whose colour a chat's avatar takes: the peer's in a private chat, the chat's own otherwise. */
export function avatarIdOf(chat: ChatView): string {
  return chat.type === ChatType.Private ? chat.peer : chat.id
}

/** What kind of chat this is, in words. */
export function chatKind(chat: ChatView): string {
  const members = `${chat.member_count} ${chat.member_count === 1 ? 'member' : 'members'}`
  if (chat.type === ChatType.Private) return 'Private chat'
  if (chat.context === 'support') return 'Support chat'
  if (chat.context === 'discussion') return `Discussion · ${members}`
  if (chat.type === ChatType.InfoChannel) return 'Channel'
  return `Group · ${members}`
}

/** True when the caller may post: not archived, and in an info channel only its owner and admins. */
export function mayPost(chat: ChatView): boolean {
  if (chat.archived) return false
  return chat.type !== ChatType.InfoChannel || (chat.role & MANAGES) !== 0
}

/** The name the signed-in person is shown by in the client's own header. */
export function ownName(me: UserView): string {
  return me.name || me.contacts[0]?.value || fallbackName(me.crmId)
}

/**
 * A message's text for one-line previews (a reply's quote, the pinned bar): its content, or for a
 * file sent without a caption the file's name (a reply's preview names no file: "Attachment").
 */
export function previewText(message: { content: string; file?: MessageView['file'] }): string {
  if (message.content !== '') return message.content
  return message.file ? `📎 ${message.file.name}` : '📎 Attachment'
}

/** Message kinds whose content is not text the author wrote (widgets, calls), so they are not edited. */
const NOT_TEXT = ChatMessFlags.Widget | ChatMessFlags.Call | ChatMessFlags.WidgetCommand

/** The caller owns or administers the chat. */
function manages(chat: ChatView): boolean {
  return (chat.role & MANAGES) !== 0
}

/** What the caller may do with one message, as the chat module decides it (docs/chat-api.md, Messages). */
export function messagePermissions(message: MessageView, chat: ChatView, me: UserView) {
  const open = !chat.archived && !message.deleted
  const mine = message.owner === me.crmId
  return {
    reply: open && mayPost(chat),
    react: open,
    edit: open && mine && (message.flags & NOT_TEXT) === 0,
    delete: open && (mine || (chat.type !== ChatType.Private && manages(chat))),
    pin: open && (chat.type === ChatType.Private || manages(chat)),
    forward: !message.deleted,
  }
}

export type MessagePermissions = ReturnType<typeof messagePermissions>

/** The caller's newest message they may edit (the up arrow in an empty composer edits it), if any. */
export function lastEditable(messages: readonly MessageView[], chat: ChatView, me: UserView): MessageView | undefined {
  return messages.findLast((message) => messagePermissions(message, chat, me).edit)
}
