import { useEffect, useReducer, useRef, useState } from 'preact/hooks'
import type { UserView } from '../api/auth-api.ts'
import type { ChatApi } from '../api/chat-api.ts'
import type { ChatView } from '../api/chat-types.ts'
import { failureText } from '../api/envelope.ts'
import { conversationReducer, EMPTY_CONVERSATION, newestId, PAGE } from '../chat/conversation/conversation-state.ts'
import { useOlderMessages } from '../chat/conversation/use-older-messages.ts'
import type { EventBus } from '../chat/live/event-bus.ts'
import { mayPost } from '../chat/message/names.ts'
import { GuestComposer } from './guest-composer.tsx'
import { GuestMessages } from './guest-messages.tsx'

interface GuestConversationProps {
  api: ChatApi
  chat: ChatView
  /** The guest as a member: its guest id stands in for a CRM id. */
  me: UserView
  /** Fetches the file of a message as this guest. */
  loadFile: (messageId: string) => Promise<Blob>
  /** The guest's call events (long-polled): a call row follows its call. */
  bus?: EventBus
}

/**
 * How often a visible guest page asks for newer messages. Guests have no gateway session, so the
 * SSE stream (GET /auth/v1/subscribe) is not open to them; they poll get_chat_messages?after=.
 */
export const GUEST_POLL_MS = 4000

/**
 * The conversation a guest joined: history, newer messages by polling, and the composer for text.
 * Guests get no upload, file browser or search (spec: "Guests").
 */
export function GuestConversation({ api, chat, me, loadFile, bus }: GuestConversationProps) {
  const [state, dispatch] = useReducer(conversationReducer, EMPTY_CONVERSATION)
  const [error, setError] = useState('')
  const { loadingOlder, loadOlder } = useOlderMessages(api, chat.id, state, dispatch, setError)
  const latest = useRef(state)
  latest.current = state

  useEffect(() => {
    api
      .getChatMessages(chat.id, { limit: PAGE })
      .then((page) => dispatch({ type: 'latest', messages: page.messages, hasMore: page.has_more }))
      .catch((failure) => setError(failureText(failure)))
  }, [api, chat.id])

  useEffect(() => {
    let running = false
    async function poll() {
      const after = newestId(latest.current)
      if (running || !latest.current.loaded || document.visibilityState !== 'visible') return
      running = true
      try {
        const page = await api.getChatMessages(chat.id, after ? { after, limit: PAGE } : { limit: PAGE })
        dispatch({ type: 'newer', messages: page.messages })
        setError('')
      } catch (failure) {
        setError(failureText(failure))
      } finally {
        running = false
      }
    }
    const timer = setInterval(poll, GUEST_POLL_MS)
    document.addEventListener('visibilitychange', poll)
    return () => {
      clearInterval(timer)
      document.removeEventListener('visibilitychange', poll)
    }
  }, [api, chat.id])

  useEffect(
    () =>
      bus?.subscribe((event) => {
        if (event !== 'resync' && event.type === 'CallUpdated' && event.data.chat_id === chat.id) {
          dispatch({ type: 'event', event, me: me.crmId })
        }
      }),
    [bus, chat.id, me.crmId],
  )

  async function send(text: string) {
    try {
      dispatch({ type: 'newer', messages: [await api.sendMessage(chat.id, text)] })
    } catch (failure) {
      throw new Error(failureText(failure))
    }
  }

  return (
    <article class="conversation" aria-label={chat.name} data-chat-id={chat.id}>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {state.loaded ? (
        <GuestMessages
          chat={chat}
          me={me}
          messages={state.messages}
          hasOlder={state.hasOlder}
          loadingOlder={loadingOlder}
          onLoadOlder={loadOlder}
          loadFile={loadFile}
        />
      ) : (
        <p class="loading">Loading messages…</p>
      )}
      {mayPost(chat) ? (
        <GuestComposer onSend={send} />
      ) : (
        <p class="read-only">{chat.archived ? 'This chat is archived and read-only.' : 'Only admins post here.'}</p>
      )}
    </article>
  )
}
