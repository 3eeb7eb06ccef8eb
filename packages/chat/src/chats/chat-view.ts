import { ChatType, MemberRole, shownName, timetickTime } from '@atrium/platform'
import { Type } from 'typebox'
import type { MemberRow } from '../members/members.repository.ts'
import type { ChatRow } from './chats.repository.ts'

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
  member_count: Type.Integer(),
  unread: Type.Integer(),
  last_message: Type.String(),
  created: Type.String(),
  timetick_update: Type.String(),
})

export interface ChatViewContext {
  membership: MemberRow
  memberCount: number
  unread: number
  /** Display name of the other participant of a private chat, '' when unknown. */
  peerName: string
}

/** The other participant of a private chat, from its pair key. */
export function peerOf(chat: ChatRow, member: number): number {
  if (chat.type !== ChatType.Private) return 0
  const [low, high] = chat.pair_key.split(':').map(Number)
  return low === member ? (high ?? 0) : (low ?? 0)
}

/**
 * Shapes a chat as the caller sees it. A private chat is named after the other participant
 * (spec: "Chat type flags"): the name others see them by (shownName, docs/people.md).
 */
export function toChatView(chat: ChatRow, { membership, memberCount, unread, peerName }: ChatViewContext) {
  const peer = peerOf(chat, membership.member)
  return {
    id: String(chat.timetick),
    type: chat.type,
    name: chat.type === ChatType.Private ? shownName(peer, peerName) : chat.name,
    description: chat.description,
    owner: String(chat.owner),
    peer: String(peer),
    archived: chat.archived === 1,
    role: membership.role,
    pinned: (membership.role & MemberRole.Pinned) !== 0,
    hidden: (membership.role & MemberRole.Hidden) !== 0,
    member_count: memberCount,
    unread,
    last_message: String(chat.last_message),
    created: new Date(timetickTime(chat.timetick)).toISOString(),
    timetick_update: String(chat.timetick_update),
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
