import type { ComponentChildren, JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { ChatView } from '../api/chat-types.ts'
import { MessageScreen } from '../screens/message-screen.tsx'

interface OpenedChatProps {
  /** Names what `open` opens: the chat is opened again only when it changes. */
  openKey: string
  /** Finds or creates the chat (open_support_chat, open_discussion). */
  open: () => Promise<ChatView>
  /** What the page is, e.g. "Support". */
  title: string
  /** Shown while the chat opens. */
  opening: ComponentChildren
  /** The failure in words. */
  failure: (error: unknown) => string
  /** The messenger with the chat open. */
  children: (chatId: string) => JSX.Element
}

/** A route that opens a chat of its own (support, a discussion) and then shows it in the messenger. */
export function OpenedChat({ openKey, open, title, opening, failure, children }: OpenedChatProps) {
  const [chatId, setChatId] = useState<string>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    let current = true
    setChatId(undefined)
    setError(undefined)
    open()
      .then((chat) => current && setChatId(chat.id))
      .catch((cause) => current && setError(failure(cause)))
    return () => {
      current = false
    }
  }, [openKey])
  if (error) {
    return (
      <MessageScreen title={`${title} not available`}>
        <p role="alert">{error}</p>
      </MessageScreen>
    )
  }
  if (!chatId) {
    return (
      <main class="notice">
        <h1>{title}</h1>
        <div class="notice-body" role="status">
          {opening}
        </div>
      </main>
    )
  }
  return children(chatId)
}
