import { ChatMessFlags } from '@atrium/platform/flags'
import type { MessageView, ReactionView } from '../../api/chat-types.ts'
import type { BroadcastEvent } from '../../live-events.ts'

/** Event types that change messages already shown (docs/chat-api.md, "Event types"). */
export const MESSAGE_CHANGE_EVENTS = new Set([
  'MessageEdited',
  'MessageDeleted',
  'MessagePinned',
  'MessageUnpinned',
  'ReactionChanged',
  'CallUpdated',
])

/** Characters of the replied message that a reply's preview carries (docs/chat-api.md, MessageView.reply_to). */
const PREVIEW_LENGTH = 200

/** Maps the messages, returning the same array when nothing changed so the list is not redrawn. */
function mapChanged(messages: MessageView[], change: (message: MessageView) => MessageView): MessageView[] {
  let changed = false
  const next = messages.map((message) => {
    const updated = change(message)
    if (updated !== message) changed = true
    return updated
  })
  return changed ? next : messages
}

/** The reply previews of `id` follow its edit or deletion the way the server builds them. */
function withPreview(message: MessageView, id: string, content: string, deleted: boolean): MessageView {
  if (message.reply_to?.id !== id) return message
  return { ...message, reply_to: { ...message.reply_to, content: content.slice(0, PREVIEW_LENGTH), deleted } }
}

/**
 * The reactions after one ReactionChanged. The caller's own change is skipped when the view already
 * shows it (the answer of toggle_message_reaction came first), so it is never counted twice.
 */
export function applyReaction(reactions: ReactionView[], emoji: string, added: boolean, byMe: boolean): ReactionView[] {
  const current = reactions.find((reaction) => reaction.emoji === emoji)
  if (byMe && (current?.mine ?? false) === added) return reactions
  const others = reactions.filter((reaction) => reaction !== current)
  if (added) {
    const next = current
      ? { ...current, count: current.count + 1, mine: current.mine || byMe }
      : { emoji, count: 1, mine: byMe }
    return [...others, next].sort((a, b) => (a.emoji < b.emoji ? -1 : a.emoji > b.emoji ? 1 : 0))
  }
  if (!current) return reactions
  if (current.count <= 1) return others
  return reactions.map((reaction) =>
    reaction === current ? { ...current, count: current.count - 1, mine: byMe ? false : current.mine } : reaction,
  )
}

/**
 * The loaded messages after a live event of their chat: edits, soft and hard deletions, pins and
 * reactions are applied from the event's data; other events leave them as they are.
 */
export function applyMessageEvent(messages: MessageView[], event: BroadcastEvent, me: string): MessageView[] {
  const { data } = event
  // A call's id is its message's id (docs/calls.md).
  const id =
    typeof data.message_id === 'string' ? data.message_id : typeof data.call_id === 'string' ? data.call_id : ''
  if (!id) return messages
  switch (event.type) {
    case 'MessageEdited': {
      if (typeof data.content !== 'string') return messages
      const content = data.content
      return mapChanged(messages, (message) => {
        if (message.id !== id) return withPreview(message, id, content, false)
        if (message.deleted || (message.content === content && message.edited)) return message
        return { ...message, content, edited: true }
      })
    }
    case 'MessageDeleted': {
      // A deleted message leaves the list, as it does from get_chat_messages after a reload
      // (docs/chat-api.md, soft_delete_message); replies keep it, shown as deleted.
      const shown = messages.filter((message) => message.id !== id)
      return mapChanged(shown, (message) => withPreview(message, id, '', true))
    }
    case 'MessagePinned':
    case 'MessageUnpinned': {
      const pinned = event.type === 'MessagePinned'
      return mapChanged(messages, (message) => {
        if (message.id !== id || message.pinned === pinned || message.deleted) return message
        const flags = pinned ? message.flags | ChatMessFlags.Pin : message.flags & ~ChatMessFlags.Pin
        return { ...message, pinned, flags }
      })
    }
    case 'ReactionChanged': {
      if (typeof data.emoji !== 'string' || typeof data.added !== 'boolean') return messages
      const { emoji, added } = data
      return mapChanged(messages, (message) => {
        if (message.id !== id || message.deleted) return message
        const reactions = applyReaction(message.reactions, emoji, added, data.by === me)
        return reactions === message.reactions ? message : { ...message, reactions }
      })
    }
    case 'CallUpdated': {
      const { media, state, caller, callee, answered_at, ended_at, duration, end_reason } = data
      const content = JSON.stringify({ media, state, caller, callee, answered_at, ended_at, duration, end_reason })
      return mapChanged(messages, (message) =>
        message.id === id && message.content !== content ? { ...message, content } : message,
      )
    }
    default:
      return messages
  }
}

/** The newest loaded pinned message, shown in the bar above the conversation. */
export function newestPinned(messages: MessageView[]): MessageView | undefined {
  return messages.findLast((message) => message.pinned && !message.deleted)
}
