import type { MessageView } from '../../api/chat-types.ts'
import { dayLabel, daysAgo } from '../message/times.ts'

/** Consecutive messages of one sender closer than this share one sender label and time. */
export const GROUP_GAP_MS = 5 * 60 * 1000

/**
 * One row of a conversation: a day separator, the "New messages" line, or a message that may
 * continue its sender's group.
 */
export type ConversationRow =
  | { kind: 'day'; key: string; label: string; time: string }
  | { kind: 'unread'; key: string }
  | { kind: 'message'; key: string; message: MessageView; continued: boolean }

/**
 * The conversation's rows, oldest first: a separator before the first message of each local day,
 * and each message marked `continued` when it follows a message of the same sender on the same
 * day within GROUP_GAP_MS (its label and time are then shown only to screen readers). The
 * "New messages" line goes right before the message `unreadFrom` (unread-marker.ts), which then
 * starts a group of its own.
 */
export function conversationRows(
  messages: MessageView[],
  { unreadFrom, now = new Date(), locale }: { unreadFrom?: string; now?: Date; locale?: string } = {},
): ConversationRow[] {
  const rows: ConversationRow[] = []
  let previous: { message: MessageView; at: Date } | undefined
  for (const message of messages) {
    const at = new Date(message.time)
    const sameDay = previous !== undefined && daysAgo(previous.at, at) === 0
    if (!sameDay) {
      rows.push({ kind: 'day', key: `day-${message.id}`, label: dayLabel(at, now, locale), time: message.time })
    }
    const marked = message.id === unreadFrom
    if (marked) rows.push({ kind: 'unread', key: 'unread-marker' })
    const continued =
      !marked &&
      sameDay &&
      previous !== undefined &&
      previous.message.owner === message.owner &&
      at.getTime() - previous.at.getTime() < GROUP_GAP_MS
    rows.push({ kind: 'message', key: message.id, message, continued })
    previous = { message, at }
  }
  return rows
}
