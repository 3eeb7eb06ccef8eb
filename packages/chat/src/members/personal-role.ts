import { ApiError, MemberRole } from '@atrium/platform'

/** The role bits that are a member's own list state: shown to that member alone. */
export const PERSONAL_ROLE = MemberRole.Hidden | MemberRole.Pinned | MemberRole.Muted

/** A role as other members see it: without the list state (who pinned, hid or muted a chat is their own business). */
export function sharedRole(role: number): number {
  return role & ~PERSONAL_ROLE
}

/** The furthest end a timed mute may have; beyond it, mute with no end. */
export const MAX_MUTE_MS = 366 * 86_400_000

/**
 * A member's role as of `now`: a mute whose end (`muted_until`) has passed is over, so its Muted
 * flag is left out. Every reader of the flag goes through this (views, events, notifications).
 */
export function currentRole(row: { role: number; muted_until: number }, now: number): number {
  const ended = row.muted_until !== 0 && row.muted_until <= now
  return ended ? row.role & ~MemberRole.Muted : row.role
}

/**
 * Whether the member's mute covers the time `at`: for an event, the time it happened, so a message
 * sent during a mute makes no notification however late it is delivered.
 */
export function isMuted(row: { role: number; muted_until: number }, at: number): boolean {
  return (currentRole(row, at) & MemberRole.Muted) !== 0
}

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/

/** An ISO 8601 time with its zone (Z or ±hh:mm) as epoch ms; NaN for anything else, or a day the month lacks. */
function parseIsoTime(text: string): number {
  // Without a zone a time would be read in the server's zone; Date.parse rolls 02-30 over to March.
  const parts = ISO_TIME.exec(text)
  if (!parts) return Number.NaN
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day) return Number.NaN
  return Date.parse(text)
}

/** update_member's `muted_until`: an ISO 8601 time with its zone, after `now` and at most MAX_MUTE_MS ahead. */
export function parseMuteEnd(text: string, now: number): number {
  const at = parseIsoTime(text)
  if (Number.isNaN(at)) {
    throw new ApiError('InvalidRequest', 'muted_until is an ISO 8601 time with its zone, as 2026-12-07T18:00:00Z')
  }
  if (at <= now) throw new ApiError('InvalidRequest', 'muted_until has passed; give a later time, or unmute')
  if (at - now > MAX_MUTE_MS) {
    throw new ApiError('InvalidRequest', 'muted_until is more than 366 days ahead; leave it out to mute with no end')
  }
  return at
}
