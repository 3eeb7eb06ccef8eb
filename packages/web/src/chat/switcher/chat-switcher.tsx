import { useContext, useEffect, useRef, useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { PeopleNamesContext } from '../../people/people-names.ts'
import { navigate } from '../../router/navigation.ts'
import { routePath } from '../../router/routes.ts'
import { QuickSwitcher, SWITCHER_KEYS, useSwitcherKey } from './quick-switcher.tsx'

interface ChatSwitcherProps {
  api: ChatApi
  chats: readonly ChatView[]
  openChatId: string | undefined
  /** The signed-in person's user id. */
  me: string
  /** Puts a chat started for a person in the list and opens it (the messenger's `opened`). */
  onStarted: (chat: ChatView) => void
}

/**
 * The sidebar's "Go to chat" button and its shortcut, and the quick switcher they open. A chat
 * opened from it, or started with a person found in it, gets the focus in its message field, so
 * the person can write at once.
 */
export function ChatSwitcher({ api, chats, openChatId, me, onStarted }: ChatSwitcherProps) {
  const [open, setOpen] = useState(false)
  const focusField = useRef(false)
  // Its people search only: no need to re-render as names change.
  const people = useContext(PeopleNamesContext)
  useSwitcherKey(() => setOpen(true))

  useEffect(() => {
    if (!focusField.current) return
    focusField.current = false
    document.getElementById('composer-text')?.focus()
  }, [openChatId])

  return (
    <>
      <button
        type="button"
        class="switcher-button secondary"
        aria-keyshortcuts="Control+K Meta+K"
        onClick={() => setOpen(true)}
      >
        <span>Go to chat…</span>
        <kbd>{SWITCHER_KEYS}</kbd>
      </button>
      {open && (
        <QuickSwitcher
          chats={chats}
          me={me}
          findPeople={people?.search}
          startChat={async (person) => (await api.createPrivateChat(person.id)).chat}
          onPick={(chat, started) => {
            focusField.current = chat.id !== openChatId
            if (started) onStarted(chat)
            else navigate(routePath({ name: 'messenger', chatId: chat.id }))
          }}
          onClose={() => setOpen(false)}
        />
      )}
    </>
  )
}
