/**
 * The flag tables of the spec ("Resources and their fields", "Authentication") as constants, with
 * helpers for bitmask values. Every value is below 2^31, so bitwise operators are exact.
 */

/** Chat kind (spec: "Chat type flags"). */
export const ChatType = { Private: 1, Group: 2, InfoChannel: 4 } as const

/**
 * A chat member's role and per-user list state (spec: "Chat member role flags"). Muted is beyond
 * the spec: the member gets the chat's events but no notifications for them (Web Push, Telegram).
 */
export const MemberRole = { Owner: 1, Admin: 2, Private: 4, Hidden: 8, Pinned: 16, Muted: 32 } as const

/** Bits of chat_mess.flags (spec: "ChatMessFlags"). */
export const ChatMessFlags = {
  File: 1,
  Pin: 2,
  Email: 64,
  Widget: 256,
  Call: 512,
  WidgetCommand: 1024,
  Deleted: 1 << 30,
} as const

/** What a message's linked_message_id means (spec: chat_mess.linkKind). */
export const LinkKind = { None: 0, Reply: 1, Reaction: 2 } as const

/** Kinds of rated object (spec: "Feedback": App, Service, Product, Order and similar). */
export const FeedbackType = { App: 1, Service: 2, Product: 3, Order: 4, Chat: 5, User: 6 } as const

/** Channels a user may be reached on (spec: "CommunicationChannel flags"). */
export const CommunicationChannel = { SMS: 1, Email: 2, Messenger: 4 } as const

/** Bits of an app record (spec: "Authentication" 5). */
export const AppFlag = { AppAuthAndCORS: 1 } as const

/** Bits of a route_map row (spec: "Authentication" 5; RequireSession is ours: the route refuses anonymous callers). */
export const RouteFlags = { AppAuthAndCORS: 1, RequireSession: 2 } as const

/** Bits of a phone or email contact (spec: "Authentication" 12). */
export const ContactFlags = { Verified: 1, ManuallyAdded: 2 } as const

/** The values of a flag table, e.g. `FlagOf<typeof ChatType>` is 1 | 2 | 4. */
export type FlagOf<T extends Record<string, number>> = T[keyof T]

/** True when every bit of `flag` is set in `value`. */
export function hasFlag(value: number, flag: number): boolean {
  return (value & flag) === flag
}

/** True when any bit of `flags` is set in `value`. */
export function hasAnyFlag(value: number, flags: number): boolean {
  return (value & flags) !== 0
}

/** `value` with the bits of `flag` set. */
export function setFlag(value: number, flag: number): number {
  return value | flag
}

/** `value` with the bits of `flag` cleared. */
export function clearFlag(value: number, flag: number): number {
  return value & ~flag
}

/** `value` with the bits of `flag` set when `on`, cleared otherwise. */
export function withFlag(value: number, flag: number, on: boolean): number {
  return on ? value | flag : value & ~flag
}

/** Names of the table's flags set in `value`, in table order, for logs and admin pages. */
export function flagNames(table: Record<string, number>, value: number): string[] {
  return Object.entries(table)
    .filter(([, flag]) => flag !== 0 && hasFlag(value, flag))
    .map(([name]) => name)
}

/** The union of every flag in a table: a value with bits outside it is invalid. */
export function allFlags(table: Record<string, number>): number {
  return Object.values(table).reduce((all, flag) => all | flag, 0)
}
