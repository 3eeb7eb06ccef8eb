import type { UserView } from '../../api/auth-api.ts'
import type { ChatView } from '../../api/chat-types.ts'

/** Chat type flags (spec: "Chat type flags"). */
export const ChatType = { Private: 1, Group: 2, InfoChannel: 4 } as const

/** Member role bits that may manage a chat (spec: Owner 1, Admin 2). */
const MANAGES = 1 | 2

/** How a message's sender is named: "You", the peer of a private chat by the chat's name, others by id. */
export function senderName(owner: string, chat: ChatView, me: UserView): string {
  if (owner === me.crmId) return 'You'
  if (chat.type === ChatType.Private && owner === chat.peer) return chat.name
  return `User ${owner}`
}

/** What kind of chat this is, in words. */
export function chatKind(chat: ChatView): string {
  if (chat.type === ChatType.Private) return 'Private chat'
  if (chat.type === ChatType.InfoChannel) return 'Channel'
  return `Group · ${chat.member_count} members`
}

/** True when the caller may post: not archived, and in an info channel only its owner and admins. */
export function mayPost(chat: ChatView): boolean {
  if (chat.archived) return false
  return chat.type !== ChatType.InfoChannel || (chat.role & MANAGES) !== 0
}

/** The name the signed-in person is shown by in the client's own header. */
export function ownName(me: UserView): string {
  return me.name || me.contacts[0]?.value || `User ${me.crmId}`
}
