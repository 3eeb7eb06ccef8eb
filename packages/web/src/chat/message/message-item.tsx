import { ChatMessFlags } from '@atrium/platform/flags'
import { useRef } from 'preact/hooks'
import type { UserView } from '../../api/auth-api.ts'
import type { ChatView, MessageView } from '../../api/chat-types.ts'
import { CallRow } from '../../calls/call-row.tsx'
import { FileAttachment } from '../../files/file-attachment.tsx'
import { Avatar } from '../../people/avatar.tsx'
import { usePeopleNames } from '../../people/people-names.ts'
import { type MessageActionHandlers, MessageActions } from '../actions/message-actions.tsx'
import { LongContent } from './long-content.tsx'
import { MarkdownContent, PlainText } from './markdown-content.tsx'
import { ChatType, messagePermissions, previewText, senderName } from './names.ts'
import { clockTime, fullTime } from './times.ts'

interface MessageItemProps {
  message: MessageView
  chat: ChatView
  me: UserView
  /** This message's action buttons are shown. */
  actionsOpen: boolean
  handlers: MessageActionHandlers
  /**
   * The message follows one of the same sender within a few minutes (message-groups.ts): its sender
   * and time are left to screen readers, so each message still says who and when.
   */
  continued?: boolean
  /** The conversation is jumping to this message (the jump's number): a long one shows unfolded. */
  jump?: number
}

/**
 * One message of a conversation: the preview of the message it replies to, its file (a thumbnail or
 * a card), its Markdown content (folded when long),
 * marks (forwarded, edited, pinned), reaction chips that toggle the caller's own reaction, and a
 * button that shows its actions.
 */
export function MessageItem({ message, chat, me, actionsOpen, handlers, continued = false, jump }: MessageItemProps) {
  const toggle = useRef<HTMLButtonElement>(null)
  const names = usePeopleNames()
  const mine = message.owner === me.crmId
  const sender = senderName(message.owner, chat, me, names)
  const sent = new Date(message.time)
  const permissions = messagePermissions(message, chat, me)
  const hasActions = Object.values(permissions).some(Boolean)
  const reply = message.reply_to
  const classes = [
    'message',
    mine && 'mine',
    continued && 'continued',
    message.pinned && 'pinned',
    message.deleted && 'deleted',
  ]
  return (
    <li class={classes.filter(Boolean).join(' ')} data-message-id={message.id} tabIndex={-1}>
      {reply && (
        <button
          type="button"
          class="reply-preview"
          title="Go to the replied message"
          onClick={() => handlers.jumpTo(reply.id)}
        >
          <span class="reply-sender">{senderName(reply.owner, chat, me, names)}</span>
          <span class="reply-text">
            {reply.deleted ? 'Message deleted' : <PlainText source={previewText(reply)} />}
          </span>
        </button>
      )}
      <div class="message-meta">
        {!mine && !continued && chat.type !== ChatType.Private && (
          <Avatar id={message.owner} name={sender} size="small" />
        )}
        <span class={continued ? 'sender visually-hidden' : 'sender'}>{sender}</span>
        <time dateTime={message.time} title={fullTime(sent)} class={continued ? 'visually-hidden' : undefined}>
          {clockTime(sent)}
        </time>
        {message.forwarded_from !== '0' && <span class="forwarded">forwarded</span>}
        {message.edited && !message.deleted && <span class="edited">edited</span>}
        {message.pinned && <span class="pin-mark">📌 pinned</span>}
      </div>
      {message.file && !message.deleted && <FileAttachment file={message.file} />}
      {message.deleted ? (
        <div class="message-content">
          <em>Message deleted</em>
        </div>
      ) : message.flags & ChatMessFlags.Call ? (
        <CallRow content={message.content} me={me.crmId} />
      ) : message.flags & ChatMessFlags.Widget ? (
        <div class="message-content">{message.content}</div>
      ) : message.file && message.content === '' ? null : (
        <LongContent id={message.id} content={message.content} jump={jump}>
          <MarkdownContent source={message.content} />
        </LongContent>
      )}
      {message.reactions.length > 0 && !message.deleted && (
        <ul class="reactions" aria-label="Reactions">
          {message.reactions.map((reaction) => (
            <li key={reaction.emoji}>
              <button
                type="button"
                class="reaction-chip"
                aria-pressed={reaction.mine}
                aria-label={`${reaction.emoji} ${reaction.count}${reaction.mine ? ', including you' : ''}`}
                disabled={!permissions.react}
                onClick={() => handlers.react(message, reaction.emoji)}
              >
                <span class="reaction-emoji">{reaction.emoji}</span> {reaction.count}
              </button>
            </li>
          ))}
        </ul>
      )}
      {hasActions && (
        <button
          ref={toggle}
          type="button"
          class="actions-toggle"
          aria-expanded={actionsOpen}
          aria-label="Actions"
          title="Actions"
          onClick={() => handlers.showActions(actionsOpen ? undefined : message.id)}
        >
          ⋯
        </button>
      )}
      {actionsOpen && (
        <MessageActions
          message={message}
          permissions={permissions}
          handlers={handlers}
          onClose={() => {
            handlers.showActions(undefined)
            toggle.current?.focus()
          }}
        />
      )}
    </li>
  )
}
