import type { UserView } from '../../api/auth-api.ts'
import type { ChatView, MessageView } from '../../api/chat-types.ts'
import { senderName } from './names.ts'

interface MessageItemProps {
  message: MessageView
  chat: ChatView
  me: UserView
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })

/** One message of a conversation. Text is shown as written; markdown rendering comes with the shared renderer. */
export function MessageItem({ message, chat, me }: MessageItemProps) {
  const mine = message.owner === me.crmId
  const sent = new Date(message.time)
  return (
    <li class={mine ? 'message mine' : 'message'} data-message-id={message.id}>
      <div class="message-meta">
        <span class="sender">{senderName(message.owner, chat, me)}</span>
        <time dateTime={message.time} title={sent.toLocaleString()}>
          {timeFormat.format(sent)}
        </time>
        {message.edited && <span class="edited">edited</span>}
      </div>
      <div class="message-content">{message.deleted ? <em>Message deleted</em> : message.content}</div>
    </li>
  )
}
