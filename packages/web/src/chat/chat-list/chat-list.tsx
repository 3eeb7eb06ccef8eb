import { useState } from 'preact/hooks'
import type { ChatView } from '../../api/chat-types.ts'
import { Avatar } from '../../people/avatar.tsx'
import { usePeopleNames } from '../../people/people-names.ts'
import { Link } from '../../router/link.tsx'
import { routePath } from '../../router/routes.ts'
import { pageDrafts } from '../conversation/drafts.ts'
import { type TypingBoard, typingText } from '../live/typing-board.ts'
import { useTypingReading } from '../live/use-typing-board.ts'
import { avatarIdOf, ChatType, memberName } from '../message/names.ts'
import { isMutedNow, muteText } from '../mute.ts'
import { useMuteEnds } from '../use-mute-ends.ts'
import { oneLine } from './last-message.ts'
import { LastMessageLine, LastMessageTime } from './last-message.tsx'

interface ChatListProps {
  /** The caller's chats, hidden ones included. */
  chats: ChatView[]
  openChatId: string | undefined
  loaded: boolean
  /** The signed-in user's CRM id: their own messages are previewed as "You: …". */
  me: string
  /** Who is typing where (the messenger's live stream). */
  typing: TypingBoard
}

/** What the rows show of others typing: who types in each chat where someone does, oneself left out. */
type TypingRows = ReadonlyMap<string, string[]>

/** A chat's unread count as a badge (nothing at 0), read as "3 unread". */
export function UnreadBadge({ count }: { count: number }) {
  if (count === 0) return null
  return (
    <span class="unread-badge" title={`${count} unread`}>
      {count > 99 ? '99+' : count}
      <span class="visually-hidden"> unread</span>
    </span>
  )
}

/** A row with unread messages stands out, unless its chat is muted (its count is shown greyed). */
function rowClass(chat: ChatView): string | undefined {
  const classes = [chat.unread > 0 && 'has-unread', isMutedNow(chat) && 'muted-chat'].filter(Boolean)
  return classes.length > 0 ? classes.join(' ') : undefined
}

/** A row's second line while others type in the chat: "typing…" for the peer, names in a group. */
function TypingLine({ chat, typers }: { chat: ChatView; typers: string[] }) {
  const names = usePeopleNames()
  const text =
    chat.type === ChatType.Private ? 'typing…' : typingText(typers.map((user) => memberName(user, chat, names)))
  return <span class="chat-preview typing-preview">{text}</span>
}

/** A row's second line while the reader has unsent text in that chat (not the open one). */
function DraftLine({ text }: { text: string }) {
  return (
    <span class="chat-preview">
      <span class="draft-mark">Draft: </span>
      {oneLine(text)}
    </span>
  )
}

interface ChatItemsProps {
  chats: ChatView[]
  openChatId: string | undefined
  me: string
  typing: TypingRows
}

/** Others typing first (it is news), then the reader's draft, else the newest message. */
function SecondLine({ chat, typers, draft, me }: { chat: ChatView; typers?: string[]; draft?: string; me: string }) {
  if (typers && typers.length > 0) return <TypingLine chat={chat} typers={typers} />
  if (draft !== undefined) return <DraftLine text={draft} />
  return <LastMessageLine chat={chat} me={me} />
}

function ChatItems({ chats, openChatId, me, typing }: ChatItemsProps) {
  // The 🔕 of a chat whose mute ends goes by itself.
  useMuteEnds(chats)
  // Asked at each render (kept in memory by the store): leaving a chat re-renders the list, and
  // its draft shows in its row.
  const drafts = pageDrafts().all(me)
  return (
    <ul class="chat-list">
      {chats.map((chat) => (
        <li key={chat.id} data-chat-id={chat.id} class={rowClass(chat)}>
          <Link
            href={routePath({ name: 'messenger', chatId: chat.id })}
            class="chat-link"
            aria-current={chat.id === openChatId ? 'page' : undefined}
          >
            <Avatar id={avatarIdOf(chat)} name={chat.name} />
            <span class="chat-name">
              {chat.pinned && (
                <span class="pin" title="Pinned">
                  📌<span class="visually-hidden">Pinned: </span>
                </span>
              )}
              {chat.name}
              {isMutedNow(chat) && (
                <span class="mute-mark" title={`${muteText(chat)}: no notifications`}>
                  {' '}
                  🔕<span class="visually-hidden"> (muted)</span>
                </span>
              )}
            </span>
            <LastMessageTime chat={chat} />
            <SecondLine
              chat={chat}
              typers={typing.get(chat.id)}
              draft={chat.id === openChatId ? undefined : drafts.get(chat.id)}
              me={me}
            />
            <UnreadBadge count={chat.unread} />
          </Link>
        </li>
      ))}
    </ul>
  )
}

/**
 * The caller's chats, pinned first, each with its newest message, its time and its unread count;
 * the open one is marked. Chats the
 * caller hid are listed only after "Show hidden chats".
 */
export function ChatList({ chats, openChatId, loaded, me, typing: board }: ChatListProps) {
  const [showHidden, setShowHidden] = useState(false)
  const typingEverywhere = useTypingReading(board, () => board.typingByChat())
  const typing: TypingRows = new Map(
    [...typingEverywhere].map(([chatId, typers]) => [chatId, typers.filter((user) => user !== me)]),
  )
  if (!loaded) return <p class="loading">Loading chats…</p>
  const shown = chats.filter((chat) => !chat.hidden)
  const hidden = chats.filter((chat) => chat.hidden)
  return (
    <nav aria-label="Chats">
      {shown.length === 0 ? (
        <p class="empty">
          {hidden.length === 0
            ? 'No chats yet. Start one: find a person by name or email.'
            : 'All your chats are hidden.'}
        </p>
      ) : (
        <ChatItems chats={shown} openChatId={openChatId} me={me} typing={typing} />
      )}
      {hidden.length > 0 && (
        <button
          type="button"
          class="link-button hidden-toggle"
          aria-expanded={showHidden}
          aria-controls="hidden-chats"
          onClick={() => setShowHidden(!showHidden)}
        >
          {showHidden ? 'Hide hidden chats' : `Show hidden chats (${hidden.length})`}
        </button>
      )}
      {showHidden && hidden.length > 0 && (
        <section id="hidden-chats" aria-label="Hidden chats" class="hidden-chats">
          <ChatItems chats={hidden} openChatId={openChatId} me={me} typing={typing} />
        </section>
      )}
    </nav>
  )
}
