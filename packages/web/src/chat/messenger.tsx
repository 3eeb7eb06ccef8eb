import { useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks'
import type { UserView } from '../api/auth-api.ts'
import type { ChatView } from '../api/chat-types.ts'
import { failureText, isFailure } from '../api/envelope.ts'
import type { Features } from '../config/client-config.ts'
import { type LiveStatus, openLiveEvents } from '../live-events.ts'
import { navigate } from '../router/navigation.ts'
import { routePath } from '../router/routes.ts'
import type { Services } from '../services.ts'
import { ChatList } from './chat-list/chat-list.tsx'
import { chatListReducer, EMPTY_CHAT_LIST } from './chat-list/chat-list-state.ts'
import { NewPrivateChat } from './chat-list/new-private-chat.tsx'
import { Conversation } from './conversation/conversation.tsx'
import { createEventBus } from './live/event-bus.ts'
import { ChatType } from './message/names.ts'
import { ProfilePanel } from './profile/profile-panel.tsx'

interface MessengerProps {
  services: Services
  me: UserView
  features: Features
  /** From /chat/c/{chatId}: a chat id, or the peer's CRM id of a private chat (notification links). */
  chatId: string | undefined
  onSignedOut: () => void
}

/** The chat a route names: by chat id, else the private chat with that peer (spec: /chat/c/{peerCrmId}). */
function findChat(chats: ChatView[], chatId: string | undefined): ChatView | undefined {
  if (!chatId) return undefined
  return (
    chats.find((chat) => chat.id === chatId) ??
    chats.find((chat) => chat.type === ChatType.Private && chat.peer === chatId)
  )
}

/**
 * The messenger at /chat/ and /chat/c/{chatId}: the chat list with unread badges beside the open
 * conversation, kept current by the gateway's live events.
 */
export function Messenger({ services, me, features, chatId, onSignedOut }: MessengerProps) {
  const { chat: api, auth } = services
  const [list, dispatch] = useReducer(chatListReducer, EMPTY_CHAT_LIST)
  const [status, setStatus] = useState<LiveStatus>('connecting')
  const [error, setError] = useState('')
  const [missing, setMissing] = useState('')
  const bus = useMemo(createEventBus, [])

  const visibleChats = features.allChats ? list.chats : list.chats.filter((chat) => chat.type === ChatType.Private)
  const openChat = findChat(visibleChats, chatId)
  const openChatId = useRef<string | undefined>(undefined)
  openChatId.current = openChat?.id

  // The list, at start and whenever live events say it is out of date.
  useEffect(() => {
    if (list.loaded && !list.reload) return
    api
      .getChats()
      .then((chats) => dispatch({ type: 'loaded', chats }))
      .catch((failure) => setError(failureText(failure)))
  }, [api, list.reload])

  useEffect(() => {
    if (list.refetch.length === 0) return
    const chatIds = list.refetch
    dispatch({ type: 'refetched', chatIds })
    for (const id of chatIds) {
      api
        .getChatInfo(id)
        .then((chat) => dispatch({ type: 'upsert', chat }))
        .catch((failure) => {
          if (isFailure(failure, 'ChatNotFound')) dispatch({ type: 'remove', chatId: id })
          else setError(failureText(failure))
        })
    }
  }, [api, list.refetch])

  // The list is fetched at every page start, so the stream starts fresh too (no stored tick):
  // replaying older events would count them twice. Reconnects replay with since=<largest tick>.
  useEffect(() => {
    const live = openLiveEvents({
      url: services.subscribeUrl,
      onEvent(event) {
        dispatch({ type: 'event', event, me: me.crmId, openChatId: openChatId.current })
        bus.publish(event)
      },
      onResync() {
        dispatch({ type: 'resync' })
        bus.publish('resync')
      },
      onStatus: setStatus,
    })
    return () => live.close()
  }, [services.subscribeUrl, me.crmId, bus])

  // A chat the list does not hold (yet): ask for it once, so a shared link or a fresh chat opens.
  const needsLookup = chatId !== undefined && list.loaded && !openChat && missing !== chatId
  useEffect(() => {
    if (!needsLookup || !chatId) return
    api
      .getChatInfo(chatId)
      .then((chat) => dispatch({ type: 'upsert', chat }))
      .catch((failure) => {
        if (isFailure(failure, 'ChatNotFound', 'InvalidRequest')) setMissing(chatId)
        else setError(failureText(failure))
      })
  }, [api, chatId, needsLookup])

  function opened(chat: ChatView) {
    dispatch({ type: 'upsert', chat })
    navigate(routePath({ name: 'messenger', chatId: chat.id }))
  }

  const notAllowed = openChat === undefined && missing === chatId && chatId !== undefined
  const outsideMode = openChat === undefined && findChat(list.chats, chatId) !== undefined
  return (
    <div class={openChat || chatId ? 'messenger chat-open' : 'messenger'}>
      <aside class="sidebar">
        <ProfilePanel me={me} auth={auth} api={api} onSignedOut={onSignedOut} />
        <NewPrivateChat api={api} onOpened={opened} />
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <ChatList chats={visibleChats} openChatId={openChat?.id} loaded={list.loaded} />
      </aside>
      <section class="conversation-pane">
        {openChat ? (
          <Conversation
            key={openChat.id}
            api={api}
            chat={openChat}
            me={me}
            bus={bus}
            onRead={(unread) => dispatch({ type: 'read', chatId: openChat.id, unread })}
          />
        ) : outsideMode ? (
          <p class="empty">Groups and channels are not shown in this deployment's client mode.</p>
        ) : notAllowed ? (
          <p class="empty">This chat does not exist, or you are not a member of it.</p>
        ) : chatId ? (
          <p class="loading">Opening the chat…</p>
        ) : (
          <p class="empty">Choose a chat, or start a new one.</p>
        )}
      </section>
      {status !== 'live' && (
        <p class="live-status" role="status">
          {status === 'offline' ? 'Offline: reconnecting…' : 'Connecting…'}
        </p>
      )}
    </div>
  )
}
