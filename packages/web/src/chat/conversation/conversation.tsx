import { useEffect, useLayoutEffect, useReducer, useRef, useState } from 'preact/hooks'
import type { UserView } from '../../api/auth-api.ts'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView, MessagePage, MessageView } from '../../api/chat-types.ts'
import { failureText } from '../../api/envelope.ts'
import type { Uploader } from '../../files/uploader.ts'
import { useAttachments } from '../../files/use-attachments.ts'
import { useFileDrop } from '../../files/use-file-drop.ts'
import { Avatar } from '../../people/avatar.tsx'
import { Link } from '../../router/link.tsx'
import { navigate } from '../../router/navigation.ts'
import { MOUNT, routePath } from '../../router/routes.ts'
import { ForwardDialog } from '../actions/forward-dialog.tsx'
import { compareIds } from '../chat-list/chat-list-state.ts'
import type { EventBus } from '../live/event-bus.ts'
import type { TypingBoard } from '../live/typing-board.ts'
import { avatarIdOf, ChatType, chatKind, lastEditable, mayPost } from '../message/names.ts'
import { MessageSearch } from '../search/message-search.tsx'
import { Composer } from './composer.tsx'
import {
  behindList,
  type ConversationAction,
  type ConversationState,
  conversationReducer,
  EMPTY_CONVERSATION,
  newestId,
  oldestId,
  PAGE,
} from './conversation-state.ts'
import { pageDrafts } from './drafts.ts'
import { MESSAGE_CHANGE_EVENTS } from './message-events.ts'
import { linkedMessage, messagePath } from './message-link.ts'
import { type FocusRequest, MessageList } from './message-list.tsx'
import { PinnedBar } from './pinned-bar.tsx'
import { TypingIndicator } from './typing-indicator.tsx'
import { useUnreadMarker } from './unread-marker.ts'
import { useCatchUp } from './use-catch-up.ts'
import { useMessageActions } from './use-message-actions.ts'
import { useOlderMessages } from './use-older-messages.ts'
import { usePeerPresence, useTyping, useTypingSender } from './use-typing.ts'

interface ConversationProps {
  api: ChatApi
  chat: ChatView
  me: UserView
  bus: EventBus
  /** The chat was marked read; `unread` is what the server says is left. */
  onRead: (unread: number) => void
  /** Uploads attached files to the gateway. */
  uploader: Uploader
  /** Who is typing where, from the live stream's typing frames. */
  typing: TypingBoard
  /** Calls the peer of this private chat; absent where calls are off (client mode). */
  onCall?: (media: 'audio' | 'video') => void
  /** No call is under way, so a new one may start. */
  canCall?: boolean
  /** The chat's first page if it was read before the first render (first-data.ts), given once. */
  firstPage?: (chatId: string) => MessagePage | undefined
}

/** Pages (of the largest size) loaded back at most to reach a message that is jumped to. */
const JUMP_PAGES = 10
const JUMP_PAGE = 200

function holds(state: ConversationState, messageId: string): boolean {
  return state.messages.some((message) => message.id === messageId)
}

/**
 * One open chat: its history (paged back on demand), live arrivals, the composer, and the read
 * marker moved whenever the reader can see the newest message.
 */
export function Conversation({
  api,
  chat,
  me,
  bus,
  onRead,
  uploader,
  typing,
  onCall,
  canCall = true,
  firstPage,
}: ConversationProps) {
  const typers = useTyping(typing, chat.id)
  const peerOnline = usePeerPresence(api, chat, typers)
  const typed = useTypingSender(api, chat.id)
  // A page read before the first render makes the first render show the messages already.
  const [initialPage] = useState(() => firstPage?.(chat.id))
  const [state, dispatch] = useReducer(conversationReducer, EMPTY_CONVERSATION, (empty) =>
    initialPage
      ? conversationReducer(empty, { type: 'latest', messages: initialPage.messages, hasMore: initialPage.has_more })
      : empty,
  )
  const unreadFrom = useUnreadMarker(chat.unread, state.messages, me.crmId)
  const [draft] = useState(() => {
    const drafts = pageDrafts()
    return { initial: drafts.read(me.crmId, chat.id), save: (text: string) => drafts.save(me.crmId, chat.id, text) }
  })
  const [error, setError] = useState('')
  const { loadingOlder, loadOlder } = useOlderMessages(api, chat.id, state, dispatch, setError)
  const [visible, setVisible] = useState(() => document.visibilityState === 'visible')
  const [searching, setSearching] = useState(false)
  const [focus, setFocus] = useState<FocusRequest>()
  const [notice, setNotice] = useState<{ text: string; chat?: ChatView }>()
  const latest = useRef(state)
  latest.current = state
  const lastMessage = useRef(chat.last_message)
  lastMessage.current = chat.last_message
  const jumps = useRef(0)

  /** Dispatches and keeps `latest` current for the rest of an async loop. */
  function apply(action: ConversationAction) {
    dispatch(action)
    latest.current = conversationReducer(latest.current, action)
  }

  const actions = useMessageActions({
    api,
    chat,
    me,
    dispatch: apply,
    onError: setError,
    onNotice: (text) => setNotice({ text }),
    jumpTo,
  })
  const attachments = useAttachments(uploader)
  const drop = useFileDrop(
    mayPost(chat) && actions.composerContext?.kind !== 'edit'
      ? (files) => {
          const note = attachments.add(files)
          if (note) setError(note)
        }
      : undefined,
  )

  // A layout effect, so the first page is asked for (or taken from the start-up requests) before
  // the "Loading messages…" frame is painted rather than after it (bench/web-render.ts).
  // A page older than the list (the list read after a message the page missed) catches up at once.
  useLayoutEffect(() => {
    if (initialPage) {
      if (behindList(latest.current, lastMessage.current)) catchUp()
      return
    }
    api
      .getChatMessages(chat.id, { limit: PAGE })
      .then((page) => {
        apply({ type: 'latest', messages: page.messages, hasMore: page.has_more })
        // A message announced while the page was on its way may be newer than the page.
        if (behindList(latest.current, lastMessage.current)) catchUp()
        else resumeAsked()
      })
      .catch((failure) => setError(failureText(failure)))
  }, [api, chat.id])

  const { catchUp, resumeAsked } = useCatchUp(
    fetchNewer,
    () => latest.current.loaded,
    (failure) => setError(failureText(failure)),
  )

  /** Pages forward from the newest loaded message until the server has nothing newer. */
  async function fetchNewer() {
    let more = latest.current.loaded
    while (more) {
      const after = newestId(latest.current)
      const page = await api.getChatMessages(chat.id, after ? { after, limit: PAGE } : { limit: PAGE })
      apply({ type: 'newer', messages: page.messages })
      more = Boolean(after) && page.has_more
    }
  }

  /** The current view of one loaded message: reaction counts of others are settled by the server's answer. */
  async function refresh(messageId: string) {
    if (!holds(latest.current, messageId)) return
    try {
      const before = (BigInt(messageId) + 1n).toString()
      const page = await api.getChatMessages(chat.id, { before, limit: 1 })
      const view = page.messages[0]
      if (view?.id === messageId) apply({ type: 'newer', messages: [view] })
    } catch (failure) {
      setError(failureText(failure))
    }
  }

  useEffect(
    () =>
      bus.subscribe((event) => {
        if (event === 'resync') {
          catchUp()
          return
        }
        if (event.data.chat_id !== chat.id) return
        if (event.type === 'NewChatMessage') catchUp()
        else if (MESSAGE_CHANGE_EVENTS.has(event.type)) {
          apply({ type: 'event', event, me: me.crmId })
          if (event.type === 'ReactionChanged' && event.data.by !== me.crmId) refresh(String(event.data.message_id))
        }
      }),
    [bus, chat.id, catchUp],
  )

  /** Brings a message into view, paging back through the history when it is older than what is loaded. */
  async function jumpTo(messageId: string) {
    try {
      const newest = newestId(latest.current)
      if (!holds(latest.current, messageId) && newest && compareIds(messageId, newest) > 0) await catchUp()
      for (let pages = 0; !holds(latest.current, messageId) && latest.current.hasOlder && pages < JUMP_PAGES; pages++) {
        const before = oldestId(latest.current)
        if (!before) break
        const page = await api.getChatMessages(chat.id, { before, limit: JUMP_PAGE })
        apply({ type: 'older', messages: page.messages, hasMore: page.has_more })
      }
      jumps.current += 1
      if (holds(latest.current, messageId)) setFocus({ id: messageId, seq: jumps.current })
      else setNotice({ text: 'That message is no longer in this chat, or too far back to show here.' })
    } catch (failure) {
      setError(failureText(failure))
    }
  }

  // Opened at a message (a search result of another chat, a copied link, also one pasted into the
  // address bar of this open chat): go to it once the history is there.
  useEffect(() => {
    if (!state.loaded) return
    const follow = () => {
      const target = linkedMessage(location.hash)
      if (!target) return
      history.replaceState(history.state, '', `${location.pathname}${location.search}`)
      jumpTo(target)
    }
    follow()
    addEventListener('hashchange', follow)
    return () => removeEventListener('hashchange', follow)
  }, [state.loaded])

  function openResult(message: MessageView) {
    if (message.chat_id !== chat.id) {
      navigate(messagePath(message))
      return
    }
    setSearching(false)
    jumpTo(message.id)
  }

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

  return (
    <article class="conversation" aria-label={chat.name} {...drop.handlers}>
      {drop.dragging && (
        <div class="drop-overlay" aria-hidden="true">
          Drop files to attach them
        </div>
      )}
      <header class="conversation-header">
        <Link href={MOUNT} class="back-link" aria-label="Back to the chat list">
          ←
        </Link>
        <div class="conversation-title-with-avatar">
          <Avatar id={avatarIdOf(chat)} name={chat.name} />
          <div class="conversation-title">
            <h2>{chat.name}</h2>
            <p class="chat-kind">
              {chatKind(chat)}
              {peerOnline !== undefined && (
                <>
                  {' · '}
                  <span class={peerOnline ? 'presence online' : 'presence'}>{peerOnline ? 'online' : 'offline'}</span>
                </>
              )}
            </p>
          </div>
        </div>
        {onCall && chat.type === ChatType.Private && !chat.archived && (
          <div class="header-calls">
            <button type="button" class="secondary" disabled={!canCall} onClick={() => onCall('audio')}>
              Call
            </button>
            <button type="button" class="secondary" disabled={!canCall} onClick={() => onCall('video')}>
              Video call
            </button>
          </div>
        )}
        <button
          type="button"
          class="secondary search-toggle"
          aria-expanded={searching}
          onClick={() => setSearching(!searching)}
        >
          Search
        </button>
      </header>
      {searching && (
        <MessageSearch api={api} chat={chat} me={me.crmId} onOpen={openResult} onClose={() => setSearching(false)} />
      )}
      <PinnedBar messages={state.messages} onJump={jumpTo} />
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p class="notice-line" role="status">
          {notice.text}
          {notice.chat && (
            <>
              {' '}
              <Link href={routePath({ name: 'messenger', chatId: notice.chat.id })}>Open {notice.chat.name}</Link>
            </>
          )}
          <button type="button" class="link-button" onClick={() => setNotice(undefined)}>
            Dismiss
          </button>
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
          actionsFor={actions.actionsFor}
          handlers={actions.handlers}
          focus={focus}
          unreadFrom={unreadFrom}
        />
      ) : (
        <p class="loading">Loading messages…</p>
      )}
      {actions.forwarding && (
        <ForwardDialog
          api={api}
          message={actions.forwarding}
          fromChatId={chat.id}
          onForwarded={(target) => {
            actions.closeForward()
            setNotice({ text: `Forwarded to ${target.name}.`, chat: target })
          }}
          onClose={actions.closeForward}
        />
      )}
      <TypingIndicator typers={typers} chat={chat} me={me} />
      {mayPost(chat) ? (
        <Composer
          onTyping={typed}
          onSend={actions.send}
          attachments={attachments}
          context={actions.composerContext}
          onCancelContext={actions.cancelComposerContext}
          draft={draft}
          onEditLast={() => {
            const last = lastEditable(state.messages, chat, me)
            if (last) actions.handlers.edit(last)
            return last !== undefined
          }}
        />
      ) : (
        <p class="read-only">{chat.archived ? 'This chat is archived and read-only.' : 'Only admins post here.'}</p>
      )}
    </article>
  )
}
