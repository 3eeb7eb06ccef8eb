import { useEffect, useRef, useState } from 'preact/hooks'
import type { ChatView } from '../../api/chat-types.ts'
import { navigate } from '../../router/navigation.ts'
import { routePath } from '../../router/routes.ts'
import { QuickSwitcher, SWITCHER_KEYS, useSwitcherKey } from './quick-switcher.tsx'

/**
 * The sidebar's "Go to chat" button and its shortcut, and the quick switcher they open. A chat
 * opened from it gets the focus in its message field, so the person can write at once.
 */
export function ChatSwitcher({ chats, openChatId }: { chats: readonly ChatView[]; openChatId: string | undefined }) {
  const [open, setOpen] = useState(false)
  const focusField = useRef(false)
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
          onPick={(chat) => {
            focusField.current = chat.id !== openChatId
            navigate(routePath({ name: 'messenger', chatId: chat.id }))
          }}
          onClose={() => setOpen(false)}
        />
      )}
    </>
  )
}
