import { useEffect, useReducer, useRef, useState } from 'preact/hooks'
import type { UserView } from '../api/auth-api.ts'
import type { ChatApi } from '../api/chat-api.ts'
import type { ChatView } from '../api/chat-types.ts'
import { failureText, isFailure } from '../api/envelope.ts'
import {
  type ConversationAction,
  conversationReducer,
  EMPTY_CONVERSATION,
  newestId,
  PAGE,
} from '../chat/conversation/conversation-state.ts'
import { MESSAGE_CHANGE_EVENTS } from '../chat/conversation/message-events.ts'
import { useCatchUp } from '../chat/conversation/use-catch-up.ts'
import { useOlderMessages } from '../chat/conversation/use-older-messages.ts'
import type { EventBus } from '../chat/live/event-bus.ts'
import { mayPost } from '../chat/message/names.ts'
import type { LiveStatus } from '../live-events.ts'
import { GuestComposer } from './guest-composer.tsx'
import { useFallbackPolling } from './guest-live.ts'
import { GuestMessages } from './guest-messages.tsx'

interface GuestConversationProps {
  api: ChatApi
  chat: ChatView
  /** The guest as a member: its guest id stands in for a CRM id. */
  me: UserView
  /** Fetches the file of a message as this guest. */
  loadFile: (messageId: string) => Promise<Blob>
  /** The guest's live events (its SSE stream, and call events long-polled while that is down). */
  bus: EventBus
  /** The stream's status: while it is `offline`, newer messages are polled instead. */
  live: LiveStatus
}

/**
 * The conversation a guest joined: history, live messages and changes from the guest's SSE stream
 * (polling with back-off only while the stream is down), and the composer for text. Guests get no
 * upload, file browser or search (spec: "Guests").
 */
export function GuestConversation({ api, chat, me, loadFile, bus, live }: GuestConversationProps) {
  const [state, dispatch] = useReducer(conversationReducer, EMPTY_CONVERSATION)
  const [error, setError] = useState('')
  // The invite was revoked (or the guest is otherwise gone): nothing more will load, so stop asking.
  const [revoked, setRevoked] = useState(false)
  const { loadingOlder, loadOlder } = useOlderMessages(api, chat.id, state, dispatch, setError)
  const latest = useRef(state)
  latest.current = state

  /** Dispatches, and keeps `latest` current at once, so a catch-up's next page starts after this one. */
  function apply(action: ConversationAction) {
    dispatch(action)
    latest.current = conversationReducer(latest.current, action)
  }

  const { catchUp, resumeAsked } = useCatchUp(
    async () => {
      let more = true
      while (more) {
        const after = newestId(latest.current)
        const page = await api.getChatMessages(chat.id, after ? { after, limit: PAGE } : { limit: PAGE })
        apply({ type: 'newer', messages: page.messages })
        more = Boolean(after) && page.has_more
      }
      setError('')
    },
    () => latest.current.loaded,
    (failure) => {
      if (isFailure(failure, 'Unauthenticated', 'InviteNotFound')) {
        setRevoked(true)
        setError('This invite link is no longer valid: it has been revoked.')
      } else setError(failureText(failure))
    },
  )

  useEffect(() => {
    api
      .getChatMessages(chat.id, { limit: PAGE })
      .then((page) => {
        apply({ type: 'latest', messages: page.messages, hasMore: page.has_more })
        // A message announced while the page was on its way may be newer than the page.
        resumeAsked()
      })
      .catch((failure) => setError(failureText(failure)))
  }, [api, chat.id])

  // Each time the stream opens, what came before it (the first page, or a break the replay could
  // not cover) is fetched once; from then on the stream brings everything.
  useEffect(() => {
    if (live === 'live') void catchUp()
  }, [live, catchUp])
  useFallbackPolling(catchUp, live === 'offline' && !revoked)

  useEffect(
    () =>
      bus.subscribe((event) => {
        if (event === 'resync') {
          void catchUp()
          return
        }
        if (event.data.chat_id !== chat.id) return
        if (event.type === 'NewChatMessage') void catchUp()
        else if (MESSAGE_CHANGE_EVENTS.has(event.type)) apply({ type: 'event', event, me: me.crmId })
      }),
    [bus, chat.id, me.crmId, catchUp],
  )

  async function send(text: string) {
    try {
      apply({ type: 'newer', messages: [await api.sendMessage(chat.id, text)] })
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
