import type { JSX } from 'preact'
import { useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks'
import { watchAddress } from '../api/address-move.ts'
import type { UserView } from '../api/auth-api.ts'
import type { ChatView } from '../api/chat-types.ts'
import { failureText, isFailure } from '../api/envelope.ts'
import { useCalls } from '../calls/use-calls.ts'
import type { Features } from '../config/client-config.ts'
import { createUploader } from '../files/uploader.ts'
import type { FirstData } from '../first-data.ts'
import { type LiveStatus, openLiveEvents, type TickStorage } from '../live-events.ts'
import { pageTitle, useTitle } from '../page-title.ts'
import { createPeopleNames, fallbackName, PeopleNamesContext } from '../people/people-names.ts'
import { lazy } from '../router/lazy.tsx'
import { Link } from '../router/link.tsx'
import { navigate } from '../router/navigation.ts'
import { MOUNT, routePath } from '../router/routes.ts'
import type { Services } from '../services.ts'
import { localStorageOrNone, rememberOpenedChat } from '../start-up.ts'
import { ChatList } from './chat-list/chat-list.tsx'
import { chatListReducer, EMPTY_CHAT_LIST, findChat, unreadOutsideMuted } from './chat-list/chat-list-state.ts'
import { NewPrivateChat } from './chat-list/new-private-chat.tsx'
import { Conversation } from './conversation/conversation.tsx'
import { createEventBus, type EventBus } from './live/event-bus.ts'
import { createTypingBoard } from './live/typing-board.ts'
import { ChatPanel } from './manage/chat-panel.tsx'
import { NewGroupChat } from './manage/new-group-chat.tsx'
import { ChatType } from './message/names.ts'
import { ProfilePanel } from './profile/profile-panel.tsx'
import { ChatSwitcher } from './switcher/chat-switcher.tsx'

interface MessengerProps {
  services: Services
  me: UserView
  features: Features
  /** Bytes per upload request (client config `files.chunkSize`). */
  uploadChunkSize: number
  /** From /chat/c/{chatId}: a chat id, or the peer's CRM id of a private chat (notification links). */
  chatId: string | undefined
  /** The chat list and open chat's first page, read before the first render (first-data.ts). */
  firstData?: FirstData
  onSignedOut: () => void
  /** More of the sidebar above the chat list (the support team's escalations), given the live events. */
  aside?: (bus: EventBus) => JSX.Element
  /** What the main pane shows instead of a conversation (the call history at /chat/calls). */
  main?: (context: MessengerContext) => JSX.Element
  /** The tab title of that screen ("Calls"); with a chat open, its name. */
  title?: string
}

/** What a screen in the messenger's main pane may use of it. */
export interface MessengerContext {
  bus: EventBus
  /** Calls the other person of a private chat. */
  call: (chatId: string, media: 'audio' | 'video') => void
  /** No call is under way, so a new one may start. */
  canCall: boolean
}

/** The ring and the call in progress: loaded after the messenger's first render (see below). */
const CallScreen = lazy(() => import('../calls/call-screen.tsx').then((module) => module.CallScreen))

/** After this long the call layer's code is fetched, so that a ring shows at once. */
const CALL_SCREEN_PRELOAD_MS = 1500

/** Keeps the largest event tick for as long as the page lives (see the live stream below). */
function memoryTickStorage(): TickStorage & { startAt(first: number): void } {
  let tick: string | null = null
  return {
    getItem: () => tick,
    setItem: (_key, value) => {
      tick = value
    },
    /** Where the first stream starts (the list's tick), unless a stream already kept a tick. */
    startAt(first) {
      if (tick === null && first > 0) tick = String(first)
    },
  }
}

/** The browser's idea of being online (navigator.onLine), following its online and offline events. */
function useOnline(): boolean {
  const [online, setOnline] = useState(() => navigator.onLine)
  useEffect(() => {
    const update = () => setOnline(navigator.onLine)
    window.addEventListener('online', update)
    window.addEventListener('offline', update)
    return () => {
      window.removeEventListener('online', update)
      window.removeEventListener('offline', update)
    }
  }, [])
  return online
}

/**
 * The messenger at /chat/ and /chat/c/{chatId}: the chat list with unread badges beside the open
 * conversation, kept current by the gateway's live events.
 */
export function Messenger({
  services,
  me,
  features,
  uploadChunkSize,
  chatId,
  firstData,
  onSignedOut,
  aside,
  main,
  title,
}: MessengerProps) {
  const { chat: api, auth } = services
  const [list, dispatch] = useReducer(chatListReducer, EMPTY_CHAT_LIST, (empty) =>
    firstData ? chatListReducer(empty, { type: 'loaded', chats: firstData.chats }) : empty,
  )
  // The first page read before the first render goes to the first conversation of that chat only.
  const firstPage = useRef(firstData?.page)
  // The tick the first list was read up to (get_chats): the live stream starts from it (below).
  const [listTick, setListTick] = useState(firstData && (firstData.tick ?? 0))
  const takeFirstPage = (chatId: string) => {
    const page = firstPage.current
    firstPage.current = undefined
    return page?.chatId === chatId ? page.page : undefined
  }
  const [status, setStatus] = useState<LiveStatus>('connecting')
  const [error, setError] = useState('')
  const [missing, setMissing] = useState('')
  const bus = useMemo(createEventBus, [])
  const typing = useMemo(() => createTypingBoard(), [])
  const names = useMemo(() => createPeopleNames(api.getProfiles, auth.searchPeople), [api, auth])
  const uploader = useMemo(
    () =>
      createUploader({
        csrfToken: services.client.csrfToken,
        refreshCsrf: services.client.refreshCsrf,
        deviceGuid: services.client.deviceGuid,
        owner: me.crmId,
        chunkSize: uploadChunkSize,
      }),
    [services.client, me.crmId, uploadChunkSize],
  )
  const calls = useCalls({
    api: services.calls,
    me: me.crmId,
    bus,
    enabled: features.calls,
    reportIce: services.calls.reportIce,
    live: status === 'live',
  })
  const canCall = calls.phase.kind === 'idle' || calls.phase.kind === 'ended'
  useEffect(() => {
    if (!features.calls) return
    const timer = setTimeout(() => CallScreen.preload().catch(() => {}), CALL_SCREEN_PRELOAD_MS)
    return () => clearTimeout(timer)
  }, [features.calls])
  /** A person by name: the name of the private chat with them, else a known display name. */
  function nameOf(id: string): string {
    const chat = list.chats.find((candidate) => candidate.type === ChatType.Private && candidate.peer === id)
    return chat?.name || names.get(id) || fallbackName(id)
  }
  const [panelOpen, setPanelOpen] = useState(false)
  const panelToggle = useRef<HTMLButtonElement>(null)

  // Support mode shows private chats and support chats (client contexts, docs/web-client.md).
  const visibleChats = features.allChats
    ? list.chats
    : list.chats.filter((chat) => chat.type === ChatType.Private || chat.context === 'support')
  const openChat = findChat(visibleChats, chatId)
  const openChatId = useRef<string | undefined>(undefined)
  openChatId.current = openChat?.id
  // The tab says where the person is and how much waits unread outside muted chats, as messengers do.
  useTitle(pageTitle(openChat?.name ?? (chatId ? undefined : title), unreadOutsideMuted(visibleChats)))

  // Remembered so that a reload of this path asks for the chat's first page at once (early-requests.ts).
  useEffect(() => {
    if (chatId && openChat) rememberOpenedChat(localStorageOrNone(), chatId, openChat.id)
  }, [chatId, openChat?.id])

  // The list, at start and whenever live events say it is out of date. A layout effect, so the
  // request leaves before the first paint rather than a frame after it (the first render of a
  // conversation waits for it; bench/web-render.ts). The first load takes the answer index.html's
  // start-up script asked for (early-requests.ts), if there is one.
  // Each answer notes the events applied before it was asked for (`since`): those after are
  // applied again on it, so an answer read before an event's change does not undo it.
  useLayoutEffect(() => {
    if (list.loaded && !list.reload) return
    const since = list.seq
    api
      .getChatsWithHidden()
      .then(({ chats, tick }) => {
        dispatch({ type: 'loaded', chats, since })
        setListTick((first) => first ?? tick ?? 0)
      })
      .catch((failure) => {
        setError(failureText(failure))
        setListTick((first) => first ?? 0)
      })
  }, [api, list.reload])

  useEffect(() => {
    if (list.refetch.length === 0) return
    const chatIds = list.refetch
    const since = list.seq
    dispatch({ type: 'refetched', chatIds })
    for (const id of chatIds) {
      api
        .getChatInfo(id)
        .then((chat) => dispatch({ type: 'upsert', chat, since }))
        .catch((failure) => {
          if (isFailure(failure, 'ChatNotFound')) dispatch({ type: 'remove', chatId: id })
          else setError(failureText(failure))
        })
    }
  }, [api, list.refetch])

  // The list is fetched at every page start, and the stream opens once it is there, from the
  // tick the list was read up to: a message sent between the two arrives by replay instead of
  // being missed until its chat's next event (a list without a tick, or one that failed, starts
  // the stream fresh). Replayed events the list already holds are not counted twice: a message
  // at or before a chat's last_message adds nothing (chat-list-state.ts). Reconnects replay with
  // since=<largest tick>. The tick lives in memory for the page, so a stream reopened after the
  // browser went offline and online again also resumes with since=<largest tick>: a dead
  // connection (a dropped Wi-Fi) can take minutes to notice, the browser's online event does not.
  const ticks = useMemo(memoryTickStorage, [])
  const online = useOnline()
  useEffect(() => {
    if (!online) {
      setStatus('offline')
      return
    }
    if (listTick === undefined) return
    ticks.startAt(listTick)
    // On a pN address, a stream that stays down because the gateway went away moves the page to
    // another address (api/address-move.ts); meanwhile the status below says it is reconnecting.
    const away = watchAddress({ location, domain: import.meta.env.ATRIUM_DOMAIN ?? '' })
    const live = openLiveEvents({
      url: services.subscribeUrl,
      storage: ticks,
      onEvent(event) {
        if (event.module === 'chat' && event.type === 'ProfileChanged') {
          names.learn([{ id: String(event.data.member), name: String(event.data.name) }])
        }
        dispatch({ type: 'event', event, me: me.crmId, openChatId: openChatId.current })
        if (event.module === 'chat' && event.type === 'NewChatMessage') {
          typing.stopped(String(event.data.chat_id), String(event.data.sender))
        }
        bus.publish(event)
      },
      onResync() {
        dispatch({ type: 'resync' })
        bus.publish('resync')
      },
      onStatus(status) {
        setStatus(status)
        away.status(status)
      },
      onTyping: typing.add,
    })
    return () => {
      live.close()
      away.close()
    }
  }, [services.subscribeUrl, me.crmId, bus, online, ticks, typing, names, listTick])

  // A chat the list does not hold (yet): ask for it once, so a shared link or a fresh chat opens.
  const needsLookup = chatId !== undefined && list.loaded && !openChat && missing !== chatId
  useEffect(() => {
    if (!needsLookup || !chatId) return
    const since = list.seq
    api
      .getChatInfo(chatId)
      .then((chat) => dispatch({ type: 'upsert', chat, since }))
      .catch((failure) => {
        if (isFailure(failure, 'ChatNotFound', 'InvalidRequest')) setMissing(chatId)
        else setError(failureText(failure))
      })
  }, [api, chatId, needsLookup])

  function opened(chat: ChatView) {
    dispatch({ type: 'upsert', chat })
    navigate(routePath({ name: 'messenger', chatId: chat.id }))
  }

  function closePanel() {
    setPanelOpen(false)
    panelToggle.current?.focus()
  }

  function left(leftChatId: string) {
    setPanelOpen(false)
    dispatch({ type: 'remove', chatId: leftChatId })
    navigate(MOUNT, { replace: true })
  }

  const notAllowed = openChat === undefined && missing === chatId && chatId !== undefined
  const outsideMode = openChat === undefined && findChat(list.chats, chatId) !== undefined
  return (
    <PeopleNamesContext.Provider value={names}>
      <div class={openChat || chatId || main ? 'messenger chat-open' : 'messenger'}>
        <aside class="sidebar">
          <ProfilePanel me={me} auth={auth} api={api} onSignedOut={onSignedOut} />
          <NewPrivateChat api={api} onOpened={opened} />
          {features.allChats && <NewGroupChat api={api} channels={features.channels} onCreated={opened} />}
          {error && (
            <p class="form-error" role="alert">
              {error}
            </p>
          )}
          {features.calls && (
            <nav class="sidebar-links" aria-label="More">
              <Link href={routePath({ name: 'calls' })}>Calls</Link>
            </nav>
          )}
          {aside?.(bus)}
          <ChatSwitcher api={api} chats={visibleChats} openChatId={openChat?.id} me={me.crmId} onStarted={opened} />
          <ChatList chats={visibleChats} openChatId={openChat?.id} loaded={list.loaded} me={me.crmId} typing={typing} />
        </aside>
        <section class={openChat && panelOpen ? 'conversation-pane panel-open' : 'conversation-pane'}>
          {openChat ? (
            <>
              <div class="open-chat">
                <button
                  type="button"
                  class="chat-info-toggle secondary"
                  ref={panelToggle}
                  aria-expanded={panelOpen}
                  aria-controls="chat-panel"
                  aria-label="Chat info"
                  onClick={() => (panelOpen ? closePanel() : setPanelOpen(true))}
                >
                  Info
                </button>
                <Conversation
                  key={openChat.id}
                  api={api}
                  chat={openChat}
                  firstPage={takeFirstPage}
                  me={me}
                  bus={bus}
                  onRead={(unread) => dispatch({ type: 'read', chatId: openChat.id, unread })}
                  uploader={uploader}
                  typing={typing}
                  onCall={features.calls ? (media) => void calls.start(openChat.id, media) : undefined}
                  canCall={canCall}
                />
              </div>
              {panelOpen && (
                <ChatPanel
                  key={openChat.id}
                  api={api}
                  chat={openChat}
                  me={me}
                  fileBrowser={features.fileBrowser}
                  onChat={(chat) => dispatch({ type: 'upsert', chat })}
                  onLeft={left}
                  onClose={closePanel}
                />
              )}
            </>
          ) : main && !chatId ? (
            main({ bus, call: (id, media) => void calls.start(id, media), canCall })
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
        {features.calls && (calls.phase.kind !== 'idle' || calls.error) && (
          <CallScreen calls={calls} me={me.crmId} nameOf={nameOf} />
        )}
        {status !== 'live' && (
          <p class="live-status" role="status">
            {status === 'offline' ? 'Offline: reconnecting…' : 'Connecting…'}
          </p>
        )}
      </div>
    </PeopleNamesContext.Provider>
  )
}
