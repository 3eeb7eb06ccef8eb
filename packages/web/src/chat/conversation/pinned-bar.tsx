import type { MessageView } from '../../api/chat-types.ts'
import { PlainText } from '../message/markdown-content.tsx'
import { previewText } from '../message/names.ts'
import { newestPinned } from './message-events.ts'

interface PinnedBarProps {
  messages: MessageView[]
  onJump: (messageId: string) => void
}

/** The newest pinned message of the loaded history above the conversation; it leads to the message. */
export function PinnedBar({ messages, onJump }: PinnedBarProps) {
  const pinned = newestPinned(messages)
  if (!pinned) return null
  const others = messages.filter((message) => message.pinned && !message.deleted).length - 1
  return (
    <div class="pinned-bar">
      <button type="button" class="pinned-message" onClick={() => onJump(pinned.id)}>
        <span class="pinned-label">📌 Pinned{others > 0 ? ` (+${others} more)` : ''}</span>
        <span class="pinned-text">
          <PlainText source={previewText(pinned)} />
        </span>
      </button>
    </div>
  )
}
