import type { ChatView, MemberView } from '../../api/chat-types.ts'
import { compareIds } from '../chat-list/chat-list-state.ts'
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

/** Owner first, then admins, then the other members. */
function rankOf(member: MemberView): number {
  if (member.owner) return 0
  return member.admin ? 1 : 2
}

/**
 * The members as the panel lists them: the owner, the admins, then everyone else, each group by
 * the name shown (`nameOf`, compared as people read it: case and accents aside), people with the
 * same name by id. The list itself stays in id order, which paging continues from.
 */
export function inListOrder(members: readonly MemberView[], nameOf: (member: MemberView) => string): MemberView[] {
  const collator = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true })
  return members
    .map((member) => ({ member, rank: rankOf(member), name: nameOf(member) }))
    .sort((a, b) => a.rank - b.rank || collator.compare(a.name, b.name) || compareIds(a.member.member, b.member.member))
    .map(({ member }) => member)
}
