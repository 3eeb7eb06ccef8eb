import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { ChatView } from '../../api/chat-types.ts'
import { Avatar } from '../../people/avatar.tsx'
import { UnreadBadge } from '../chat-list/chat-list.tsx'
import { avatarIdOf, chatKind } from '../message/names.ts'
import { switcherMatches } from './switcher-match.ts'

/** The shortcut as this computer's keyboard shows it. */
export const SWITCHER_KEYS = /Mac|iPhone|iPad/.test(navigator.userAgent) ? '⌘K' : 'Ctrl+K'

/** Calls `open` on Ctrl+K (⌘K on a Mac) anywhere in the page, as Slack and Element do. */
export function useSwitcherKey(open: () => void): void {
  useEffect(() => {
    function keyDown(event: KeyboardEvent) {
      if (!(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return
      if (event.key.toLowerCase() !== 'k') return
      event.preventDefault()
      open()
    }
    document.addEventListener('keydown', keyDown)
    return () => document.removeEventListener('keydown', keyDown)
  }, [])
}

interface QuickSwitcherProps {
  /** The person's chats in the list's order, hidden ones included. */
  chats: readonly ChatView[]
  onPick: (chat: ChatView) => void
  onClose: () => void
}

/**
 * "Go to chat": a modal with one field that finds a chat by name as it is typed (switcher-match.ts);
 * the arrow keys choose, Enter or a click opens, Escape or a click outside closes and gives the
 * focus back. The field is a combobox over a listbox, so screen readers hear the chosen chat.
 */
export function QuickSwitcher({ chats, onPick, onClose }: QuickSwitcherProps) {
  const [query, setQuery] = useState('')
  const [active, setActive] = useState(0)
  const dialog = useRef<HTMLDialogElement>(null)
  const matches = switcherMatches(chats, query)
  const chosen = Math.min(active, matches.length - 1)

  useLayoutEffect(() => {
    dialog.current?.showModal()
  }, [])

  /** Closes the dialog first, so the chat opened after it keeps the focus it is given. */
  function pick(chat: ChatView) {
    dialog.current?.close()
    onPick(chat)
  }

  function keyDown(event: KeyboardEvent) {
    const step = event.key === 'ArrowDown' ? 1 : event.key === 'ArrowUp' ? -1 : 0
    if (step !== 0 && matches.length > 0) {
      event.preventDefault()
      setActive((chosen + step + matches.length) % matches.length)
    } else if (event.key === 'Enter') {
      event.preventDefault()
      const chat = matches[chosen]
      if (chat) pick(chat)
    }
  }

  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the keyboard closes a modal dialog with Escape by itself.
    <dialog
      class="quick-switcher"
      ref={dialog}
      aria-label="Go to chat"
      onClose={onClose}
      // A click on the backdrop lands on the dialog itself, outside its content.
      onClick={(event) => {
        if (event.target === event.currentTarget) event.currentTarget.close()
      }}
    >
      <input
        type="text"
        role="combobox"
        aria-label="Chat name"
        aria-expanded={matches.length > 0}
        aria-controls="switcher-options"
        aria-autocomplete="list"
        aria-activedescendant={matches[chosen] ? `switcher-${matches[chosen].id}` : undefined}
        placeholder="Go to chat…"
        autocomplete="off"
        spellcheck={false}
        value={query}
        onInput={(event) => {
          setQuery(event.currentTarget.value)
          setActive(0)
        }}
        onKeyDown={keyDown}
      />
      {matches.length === 0 ? (
        <p class="empty" role="status">
          No chat called “{query.trim()}”.
        </p>
      ) : (
        <div id="switcher-options" role="listbox" aria-label="Chats">
          {matches.map((chat, index) => (
            // biome-ignore lint/a11y/useKeyWithClickEvents: the combobox's field owns the keyboard (arrows, Enter) via aria-activedescendant.
            <div
              key={chat.id}
              tabIndex={-1}
              id={`switcher-${chat.id}`}
              role="option"
              aria-selected={index === chosen}
              onMouseDown={(event) => event.preventDefault()}
              onClick={() => pick(chat)}
              onMouseMove={() => index !== chosen && setActive(index)}
            >
              <Avatar id={avatarIdOf(chat)} name={chat.name} size="small" />
              <span class="switcher-name">{chat.name}</span>
              <span class="switcher-kind">{chat.hidden ? `${chatKind(chat)} · hidden` : chatKind(chat)}</span>
              <UnreadBadge count={chat.unread} />
            </div>
          ))}
        </div>
      )}
      <p class="switcher-help" aria-hidden="true">
        ↑ ↓ to choose · Enter to open · Esc to close
      </p>
    </dialog>
  )
}
