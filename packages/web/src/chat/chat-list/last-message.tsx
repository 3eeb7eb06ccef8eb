import type { ChatView } from '../../api/chat-types.ts'
import { PlainText } from '../message/markdown-content.tsx'
import { chatKind } from '../message/names.ts'
import { fullTime, listTime } from '../message/times.ts'
import { previewBody, previewSender } from './last-message.ts'

/** A list row's second line: who wrote the newest message and its first words, or the chat's kind without one. */
export function LastMessageLine({ chat, me }: { chat: ChatView; me: string }) {
  const preview = chat.last_message_preview
  if (!preview)
    return <span class="chat-kind">{chat.archived ? 'Archived' : `${chatKind(chat)} · no messages yet`}</span>
  const sender = previewSender(chat, preview, me)
  return (
    <span class="chat-preview">
      {chat.archived && <span class="chat-archived">Archived · </span>}
      {sender && <span class="preview-sender">{sender}: </span>}
      <PlainText source={previewBody(preview, me)} />
    </span>
  )
}

/** When the newest message was sent: the time today, the weekday this week, else the date. */
export function LastMessageTime({ chat }: { chat: ChatView }) {
  const preview = chat.last_message_preview
  if (!preview) return null
  const sent = new Date(preview.time)
  return (
    <time class="chat-time" dateTime={preview.time} title={fullTime(sent)}>
      {listTime(sent)}
    </time>
  )
}
