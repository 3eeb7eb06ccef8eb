import type { ChatView } from '../../api/chat-types.ts'
import { Link } from '../../router/link.tsx'
import { routePath } from '../../router/routes.ts'
import { chatKind } from '../message/names.ts'

interface ChatListProps {
  chats: ChatView[]
  openChatId: string | undefined
  loaded: boolean
}

function UnreadBadge({ count }: { count: number }) {
  if (count === 0) return null
  return (
    <span class="unread-badge" title={`${count} unread`}>
      {count > 99 ? '99+' : count}
      <span class="visually-hidden"> unread</span>
    </span>
  )
}

/** The caller's chats, pinned first, each with its unread count; the open one is marked. */
export function ChatList({ chats, openChatId, loaded }: ChatListProps) {
  if (!loaded) return <p class="loading">Loading chats…</p>
  if (chats.length === 0) return <p class="empty">No chats yet. Start one with someone's user id.</p>
  return (
    <nav aria-label="Chats">
      <ul class="chat-list">
        {chats.map((chat) => (
          <li key={chat.id} data-chat-id={chat.id} class={chat.unread > 0 ? 'has-unread' : undefined}>
            <Link
              href={routePath({ name: 'messenger', chatId: chat.id })}
              class="chat-link"
              aria-current={chat.id === openChatId ? 'page' : undefined}
            >
              <span class="chat-name">
                {chat.pinned && (
                  <span class="pin" title="Pinned">
                    📌<span class="visually-hidden">Pinned: </span>
                  </span>
                )}
                {chat.name}
              </span>
              <span class="chat-kind">{chat.archived ? 'Archived' : chatKind(chat)}</span>
              <UnreadBadge count={chat.unread} />
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  )
}
