import type { ChatView, MemberView } from '../../api/chat-types.ts'
import { ChatType } from '../message/names.ts'

/** Member role flags (spec: "Member role flags"): Owner 1, Admin 2. */
const OWNER = 1
const ADMIN = 2

/** What the caller may do to one member of a chat, as the chat module allows it (docs/chat-api.md, "Members"). */
export interface MemberActions {
  makeAdmin: boolean
  /** Revoke Admin: the owner for any admin, an admin only for themselves (stepping down). */
  revokeAdmin: boolean
  remove: boolean
}

const NONE: MemberActions = { makeAdmin: false, revokeAdmin: false, remove: false }

/** True when the caller owns or administers a group or channel: they add members and create invites. */
export function managesChat(chat: ChatView): boolean {
  return chat.type !== ChatType.Private && (chat.role & (OWNER | ADMIN)) !== 0
}

/**
 * The actions on `member` the caller (`me`, with the chat's `role`) may take: nobody changes the
 * owner; only the owner removes or demotes another admin; an admin may step down; the caller leaves
 * rather than removes themselves (leave_chat hands ownership on).
 */
export function memberActions(chat: ChatView, me: string, member: MemberView): MemberActions {
  if (!managesChat(chat) || member.owner) return NONE
  const owner = (chat.role & OWNER) !== 0
  const self = member.member === me
  if (member.admin) return { makeAdmin: false, revokeAdmin: owner || self, remove: owner && !self }
  return { makeAdmin: !self, revokeAdmin: false, remove: !self }
}

/** The member's role in words. */
export function roleName(member: MemberView): 'Owner' | 'Admin' | 'Member' {
  if (member.owner) return 'Owner'
  return member.admin ? 'Admin' : 'Member'
}
