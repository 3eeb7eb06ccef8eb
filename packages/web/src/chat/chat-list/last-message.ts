import { ChatMessFlags } from '@atrium/platform/flags'
import type { ChatView, LastMessagePreview } from '../../api/chat-types.ts'
import { callSummary, parseCallRecord } from '../../calls/call-words.ts'
import type { BroadcastEvent } from '../../live-events.ts'
import { fallbackName } from '../../people/people-names.ts'
import { ChatType } from '../message/names.ts'

/** Characters of the text a preview keeps, as the chat module cuts it. */
export const PREVIEW_LENGTH = 200

/**
 * Who a list row names before the text: "You" for one's own message, the sender in a group, and
 * nobody for the peer of a private chat or an info channel's post (the chat's name says who).
 */
export function previewSender(chat: ChatView, preview: LastMessagePreview, me: string): string {
  if (preview.sender === me) return 'You'
  if (chat.type !== ChatType.Group) return ''
  return preview.sender_name || fallbackName(preview.sender)
}

/** Text as one line of a list row: runs of spaces and line breaks become one space. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/** What a list row says of the message, on one line: its text, or what it is when it has none. */
export function previewBody(preview: LastMessagePreview, me = ''): string {
  if (preview.flags & ChatMessFlags.Widget) return 'Widget'
  if (preview.flags & ChatMessFlags.Call) {
    const record = parseCallRecord(preview.content)
    return record ? `📞 ${callSummary(record, me)}` : '📞 Call'
  }
  const text = oneLine(preview.content)
  if (preview.flags & ChatMessFlags.File) return `📎 ${text || preview.file_name}`
  return text
}

/** A display name some other preview of the list already gives this sender, '' when none does. */
function knownName(chats: ChatView[], sender: string): string {
  for (const chat of chats) {
    const preview = chat.last_message_preview
    if (preview?.sender === sender && preview.sender_name) return preview.sender_name
  }
  return ''
}

/** The preview of a NewChatMessage event's message (docs/chat-api.md, "Event data"). */
export function previewOfEvent(event: BroadcastEvent, chats: ChatView[]): LastMessagePreview {
  const data = event.data
  const flags = Number(data.flags ?? 0)
  const sender = String(data.sender)
  const file = data.file as { name?: string } | undefined
  return {
    id: String(data.message_id),
    sender,
    sender_name: knownName(chats, sender),
    content:
      flags & ChatMessFlags.Widget
        ? ''
        : flags & ChatMessFlags.Call
          ? String(data.content ?? '')
          : String(data.content ?? '').slice(0, PREVIEW_LENGTH),
    file_name: file?.name ?? '',
    flags,
    edited: false,
    time: String(data.time ?? new Date().toISOString()),
  }
}
