import { ChatMessFlags } from '@atrium/platform/flags'
import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { UserView } from '../api/auth-api.ts'
import type { ChatView, MessageView } from '../api/chat-types.ts'
import { CallRow } from '../calls/call-row.tsx'
import { LoadOlderButton } from '../chat/conversation/load-older.tsx'
import { senderName } from '../chat/message/names.ts'
import { GuestFile } from '../files/guest-file.tsx'
import { usePeopleNames } from '../people/people-names.ts'

interface GuestMessagesProps {
  chat: ChatView
  me: UserView
  messages: MessageView[]
  hasOlder: boolean
  loadingOlder: boolean
  onLoadOlder: () => void
  /** Fetches the file of a message as this guest. */
  loadFile: (messageId: string) => Promise<Blob>
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })

/**
 * A guest's view of the messages, oldest first, as plain text: no message actions beyond what a
 * guest needs to talk. It follows the newest message while the reader is at the bottom.
 */
export function GuestMessages(props: GuestMessagesProps) {
  const { chat, me, messages, hasOlder, loadingOlder, onLoadOlder, loadFile } = props
  const names = usePeopleNames()
  const box = useRef<HTMLDivElement>(null)
  const [atBottom, setAtBottom] = useState(true)
  const newest = messages.at(-1)

  useLayoutEffect(() => {
    const element = box.current
    if (element && (atBottom || newest?.owner === me.crmId)) element.scrollTop = element.scrollHeight
  }, [newest?.id])

  function scrolled() {
    const element = box.current
    if (element) setAtBottom(element.scrollHeight - element.scrollTop - element.clientHeight < 48)
  }

  return (
    <div class="message-scroll" ref={box} onScroll={scrolled}>
      <LoadOlderButton hasOlder={hasOlder} loadingOlder={loadingOlder} onLoadOlder={onLoadOlder} />
      {messages.length === 0 ? (
        <p class="empty">No messages yet. Say hello!</p>
      ) : (
        <div role="log" aria-live="polite" aria-label={`Messages in ${chat.name}`}>
          <ol class="messages">
            {messages.map((message) => (
              <li
                key={message.id}
                class={message.owner === me.crmId ? 'message mine' : 'message'}
                data-message-id={message.id}
              >
                <div class="message-meta">
                  <span class="sender">{senderName(message.owner, chat, me, names)}</span>
                  <time dateTime={message.time}>{timeFormat.format(new Date(message.time))}</time>
                  {message.edited && <span class="edited">edited</span>}
                </div>
                {message.file && !message.deleted && (
                  <GuestFile file={message.file} load={() => loadFile(message.id)} />
                )}
                {!message.deleted && message.flags & ChatMessFlags.Call ? (
                  <CallRow content={message.content} me={me.crmId} />
                ) : (
                  (message.deleted || message.content !== '' || !message.file) && (
                    <div class="message-content">{message.deleted ? <em>Message deleted</em> : message.content}</div>
                  )
                )}
              </li>
            ))}
          </ol>
        </div>
      )}
    </div>
  )
}
