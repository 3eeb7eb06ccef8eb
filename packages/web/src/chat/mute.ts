import type { ChatView } from '../api/chat-types.ts'

/** Whether the caller's mute of the chat is on now: a mute with an end is over once it passes. */
export function isMutedNow(chat: Pick<ChatView, 'muted' | 'muted_until'>, now = Date.now()): boolean {
  if (!chat.muted) return false
  return !chat.muted_until || Date.parse(chat.muted_until) > now
}

/** When the first of these chats' mutes that are on at `now` and have an end ends (epoch ms); undefined if none. */
export function nextMuteEnd(
  chats: readonly Pick<ChatView, 'muted' | 'muted_until'>[],
  now = Date.now(),
): number | undefined {
  let next: number | undefined
  for (const chat of chats) {
    if (!chat.muted || !chat.muted_until) continue
    const end = Date.parse(chat.muted_until)
    if (end > now && (next === undefined || end < next)) next = end
  }
  return next
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' })
const weekdayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: 'numeric', minute: '2-digit' })
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/**
 * "Muted until 15:00" today, "Muted until Tue 15:00" within six days, else with its date;
 * "Muted" for a mute with no end.
 */
export function muteText(chat: Pick<ChatView, 'muted_until'>, now = Date.now()): string {
  if (!chat.muted_until) return 'Muted'
  const end = Date.parse(chat.muted_until)
  const today = new Date(end).toDateString() === new Date(now).toDateString()
  const format = today ? timeFormat : end - now < 6 * 86_400_000 ? weekdayFormat : dateFormat
  return `Muted until ${format.format(end)}`
}

/** The lengths offered for a mute, as chat apps offer them; `undefined` is no end. */
export const MUTE_CHOICES: readonly { label: string; ms: number | undefined }[] = [
  { label: 'For 1 hour', ms: 3_600_000 },
  { label: 'For 8 hours', ms: 8 * 3_600_000 },
  { label: 'For 1 day', ms: 86_400_000 },
  { label: 'For 1 week', ms: 7 * 86_400_000 },
  { label: 'Until I unmute', ms: undefined },
]
