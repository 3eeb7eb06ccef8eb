import { ApiError, ChatType, MemberRole } from '@atrium/platform'
import type { ChatRow } from './chats/chats.repository.ts'
import type { MemberRow } from './members/members.repository.ts'
import type { Store, Unit } from './store.ts'

/** Who is calling, as a chat member: a CRM user or a guest of an invite. */
export interface Caller {
  /** The member id: the CRM id, or the guest id for guests. */
  member: number
  guest: boolean
  appId: number
}

export interface Membership {
  chat: ChatRow
  membership: MemberRow
}

type Reader = Pick<Store, 'members'> | Pick<Unit, 'members'>
type ProfileReader = Pick<Store, 'profiles'> | Pick<Unit, 'profiles'>

/**
 * Refuses ids of nobody (issue 16): a chat or membership may name only people the chat module
 * knows, registered by the gateway (set_profiles) or a guest of an invite. UserNotFound names the ids.
 */
export async function requireKnown(reader: ProfileReader, members: number[]): Promise<void> {
  const unknown = await reader.profiles.unknown(members)
  if (unknown.length === 0) return
  const list = unknown.join(', ')
  throw new ApiError('UserNotFound', unknown.length === 1 ? `no user ${list}` : `no users ${list}`, {
    members: unknown.map(String),
  })
}

/** The chat and the caller's membership; ChatNotFound when either is missing, so non-members learn nothing. */
export async function requireMember(store: Reader, chatId: number, caller: Caller): Promise<Membership> {
  const access = await store.members.findWithChat(chatId, caller.member)
  if (!access) throw new ApiError('ChatNotFound', `chat ${chatId} not found`)
  return access
}

/** True for the owner and admins. */
export function isChatAdmin(role: number): boolean {
  return (role & (MemberRole.Owner | MemberRole.Admin)) !== 0
}

/** Refuses callers who are neither owner nor admin. */
export function requireAdmin({ membership }: Membership): void {
  if (!isChatAdmin(membership.role)) throw new ApiError('NotChatAdmin')
}

/** Refuses posting where the caller may not: archived chats, and info channels for non-admins. */
export function requireCanPost({ chat, membership }: Membership): void {
  if (chat.archived) throw new ApiError('ChatArchived')
  if (chat.type === ChatType.InfoChannel && !isChatAdmin(membership.role)) {
    throw new ApiError('NotChatAdmin', 'only admins post in an info channel')
  }
}

/** Refuses guests. */
export function requireUser(caller: Caller, what: string): void {
  if (caller.guest) throw new ApiError('GuestNotAllowed', `guests cannot ${what}`)
}
