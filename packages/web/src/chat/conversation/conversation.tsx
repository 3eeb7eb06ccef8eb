import { useCallback, useEffect, useReducer, useRef, useState } from 'preact/hooks'
import type { UserView } from '../../api/auth-api.ts'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { failureText } from '../../api/envelope.ts'
import { Link } from '../../router/link.tsx'
import { MOUNT } from '../../router/routes.ts'
import { compareIds } from '../chat-list/chat-list-state.ts'
import type { EventBus } from '../live/event-bus.ts'
import { chatKind, mayPost } from '../message/names.ts'
import { Composer } from './composer.tsx'
import { conversationReducer, EMPTY_CONVERSATION, newestId, oldestId } from './conversation-state.ts'
import { MessageList } from './message-list.tsx'

interface ConversationProps {
  api: ChatApi
  chat: ChatView
  me: UserView
  bus: EventBus
  /** The chat was marked read; `unread` is what the server says is left. */
  onRead: (unread: number) => void
}

/** Messages per page of history. */
const PAGE = 50

/** Event types that bring new or changed messages of a chat. */
const MESSAGE_EVENTS = new Set(['NewChatMessage', 'MessageEdited', 'MessageDeleted'])

/**
 * One open chat: its history (paged back on demand), live arrivals, the composer, and the read
 * marker moved whenever the reader can see the newest message.
 */
export function Conversation({ api, chat, me, bus, onRead }: ConversationProps) {
  const [state, dispatch] = useReducer(conversationReducer, EMPTY_CONVERSATION)
  const [error, setError] = useState('')
  const [loadingOlder, setLoadingOlder] = useState(false)
  const [visible, setVisible] = useState(() => document.visibilityState === 'visible')
  const latest = useRef(state)
  latest.current = state

  useEffect(() => {
    api
      .getChatMessages(chat.id, { limit: PAGE })
      .then((page) => dispatch({ type: 'latest', messages: page.messages, hasMore: page.has_more }))
      .catch((failure) => setError(failureText(failure)))
  }, [api, chat.id])

  // One catch-up at a time; a request for another while one runs repeats it once afterwards.
  const catching = useRef({ running: false, again: false })
  const catchUp = useCallback(async () => {
    const flags = catching.current
    if (flags.running) {
      flags.again = true
      return
    }
    flags.running = true
    try {
      do {
        flags.again = false
        await fetchNewer()
      } while (flags.again)
    } catch (failure) {
      setError(failureText(failure))
    } finally {
      flags.running = false
    }
  }, [api, chat.id])

  /** Pages forward from the newest loaded message until the server has nothing newer. */
  async function fetchNewer() {
    let more = latest.current.loaded
    while (more) {
      const after = newestId(latest.current)
      const page = await api.getChatMessages(chat.id, after ? { after, limit: PAGE } : { limit: PAGE })
      dispatch({ type: 'newer', messages: page.messages })
      latest.current = conversationReducer(latest.current, { type: 'newer', messages: page.messages })
      more = Boolean(after) && page.has_more
    }
  }

  useEffect(
    () =>
      bus.subscribe((event) => {
        if (event === 'resync' || (MESSAGE_EVENTS.has(event.type) && event.data.chat_id === chat.id)) catchUp()
      }),
    [bus, chat.id, catchUp],
  )

  useEffect(() => {
    const update = () => setVisible(document.visibilityState === 'visible')
    document.addEventListener('visibilitychange', update)
    return () => document.removeEventListener('visibilitychange', update)
  }, [])

  // The reader sees the newest message: move the marker when something is unread.
  const marked = useRef('0')
  const newest = state.messages.at(-1)
  useEffect(() => {
    if (!state.loaded || !visible) return
    const unseen = newest && newest.owner !== me.crmId && compareIds(newest.id, marked.current) > 0
    if (!unseen && chat.unread === 0) return
    marked.current = newest?.id ?? marked.current
    api
      .markRead(chat.id)
      .then((read) => onRead(read.unread))
      .catch((failure) => setError(failureText(failure)))
  }, [state.loaded, visible, newest?.id, chat.unread])

  async function loadOlder() {
    const before = oldestId(state)
    if (!before) return
    setLoadingOlder(true)
    try {
      const page = await api.getChatMessages(chat.id, { before, limit: PAGE })
      dispatch({ type: 'older', messages: page.messages, hasMore: page.has_more })
    } catch (failure) {
      setError(failureText(failure))
    } finally {
      setLoadingOlder(false)
    }
  }

  async function send(text: string) {
    try {
      const message = await api.sendMessage(chat.id, text)
      dispatch({ type: 'newer', messages: [message] })
    } catch (failure) {
      throw new Error(failureText(failure))
    }
  }

  return (
    <article class="conversation" aria-label={chat.name}>
      <header class="conversation-header">
        <Link href={MOUNT} class="back-link" aria-label="Back to the chat list">
          ←
        </Link>
        <div>
          <h2>{chat.name}</h2>
          <p class="chat-kind">{chatKind(chat)}</p>
        </div>
      </header>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {state.loaded ? (
        <MessageList
          chat={chat}
          me={me}
          messages={state.messages}
          hasOlder={state.hasOlder}
          loadingOlder={loadingOlder}
          onLoadOlder={loadOlder}
        />
      ) : (
        <p class="loading">Loading messages…</p>
      )}
      {mayPost(chat) ? (
        <Composer onSend={send} />
      ) : (
        <p class="read-only">{chat.archived ? 'This chat is archived and read-only.' : 'Only admins post here.'}</p>
      )}
    </article>
  )
}
