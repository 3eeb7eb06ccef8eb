import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { UserView } from '../../api/auth-api.ts'
import type { ChatView, MessageView } from '../../api/chat-types.ts'
import type { MessageActionHandlers } from '../actions/message-actions.tsx'
import { MessageItem } from '../message/message-item.tsx'
import { LoadOlderButton } from './load-older.tsx'
import { conversationRows } from './message-groups.ts'

/** A message to bring into view and focus; `seq` repeats a jump to the same message. */
export interface FocusRequest {
  id: string
  seq: number
}

interface MessageListProps {
  chat: ChatView
  me: UserView
  messages: MessageView[]
  hasOlder: boolean
  loadingOlder: boolean
  onLoadOlder: () => void
  /** The message whose actions are shown. */
  actionsFor: string | undefined
  handlers: MessageActionHandlers
  focus: FocusRequest | undefined
  /** The message the "New messages" line goes before (unread-marker.ts). */
  unreadFrom?: string
}

/** Pixels from the bottom within which the list counts as scrolled to the newest message. */
const NEAR_BOTTOM = 48

/**
 * The conversation's messages, oldest first. It stays at the newest message while the reader is
 * there (or just sent one) and keeps the reader's place when older messages are loaded above; a
 * chat opened with more unread messages than fit below its "New messages" line opens at the line.
 * Scrolled away from the newest message, "Jump to newest" brings the reader back.
 */
export function MessageList(props: MessageListProps) {
  const { chat, me, messages, hasOlder, loadingOlder, onLoadOlder, actionsFor, handlers, focus, unreadFrom } = props
  const box = useRef<HTMLDivElement>(null)
  const place = useRef({ fromBottom: 0, atBottom: true, newest: '' })
  // Away from the newest message, a button brings the reader back to it.
  const [away, setAway] = useState(false)

  function remember() {
    const element = box.current
    if (!element) return
    const fromBottom = element.scrollHeight - element.scrollTop
    const atBottom = fromBottom - element.clientHeight < NEAR_BOTTOM
    place.current = { ...place.current, fromBottom, atBottom }
    setAway(!atBottom)
  }

  function toNewest() {
    const element = box.current
    if (!element) return
    element.scrollTop = element.scrollHeight
    remember()
  }

  useLayoutEffect(() => {
    const element = box.current
    if (!element) return
    const newest = messages.at(-1)
    const sentByMe = newest !== undefined && newest.id !== place.current.newest && newest.owner === me.crmId
    if (place.current.atBottom || sentByMe) element.scrollTop = element.scrollHeight
    else element.scrollTop = element.scrollHeight - place.current.fromBottom
    place.current.newest = newest?.id ?? ''
    remember()
  }, [messages])

  // Opened with more unread than fit below the line: the line goes to the top, where reading starts.
  useLayoutEffect(() => {
    const element = box.current
    const line = element?.querySelector<HTMLElement>('.unread-marker')
    if (!element || !line) return
    const top = line.getBoundingClientRect().top - element.getBoundingClientRect().top
    if (top >= 0) return
    element.scrollTop += top - 8
    remember()
  }, [unreadFrom])

  useLayoutEffect(() => {
    if (!focus) return
    const target = box.current?.querySelector<HTMLElement>(`[data-message-id="${focus.id}"]`)
    if (!target) return
    target.scrollIntoView({ block: 'center' })
    target.focus({ preventScroll: true })
    remember()
  }, [focus])

  return (
    <div
      class="message-scroll"
      ref={box}
      onScroll={remember}
      onLoadCapture={() => {
        // A thumbnail that finished loading grew its message: stay at the newest one if there.
        const element = box.current
        if (element && place.current.atBottom) element.scrollTop = element.scrollHeight
      }}
    >
      <LoadOlderButton hasOlder={hasOlder} loadingOlder={loadingOlder} onLoadOlder={onLoadOlder} />
      {messages.length === 0 ? (
        <p class="empty">No messages yet. Say hello!</p>
      ) : (
        <div role="log" aria-live="polite" aria-label={`Messages in ${chat.name}`}>
          <ol class="messages">
            {conversationRows(messages, { unreadFrom }).map((row) =>
              row.kind === 'unread' ? (
                <li key={row.key} class="unread-marker">
                  <h3 class="unread-label">New messages</h3>
                </li>
              ) : row.kind === 'day' ? (
                <li key={row.key} class="day-separator">
                  <h3 class="day-label">
                    <time dateTime={row.time.slice(0, 10)}>{row.label}</time>
                  </h3>
                </li>
              ) : (
                <MessageItem
                  key={row.key}
                  message={row.message}
                  chat={chat}
                  me={me}
                  actionsOpen={actionsFor === row.message.id}
                  handlers={handlers}
                  continued={row.continued}
                  jump={focus?.id === row.message.id ? focus.seq : undefined}
                />
              ),
            )}
          </ol>
        </div>
      )}
      {away && messages.length > 0 && (
        <div class="to-newest">
          <button type="button" class="secondary" onClick={toNewest}>
            Jump to newest ↓
          </button>
        </div>
      )}
    </div>
  )
}
