import type { ComponentChildren } from 'preact'
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { PersonView } from '../../api/auth-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { failureText } from '../../api/envelope.ts'
import { Avatar } from '../../people/avatar.tsx'
import { PEOPLE_SEARCH_MIN_QUERY, PEOPLE_SEARCH_PAUSE_MS } from '../../people/people-names.ts'
import { UnreadBadge } from '../chat-list/chat-list.tsx'
import { avatarIdOf, chatKind } from '../message/names.ts'
import { switcherMatches, switcherPeople } from './switcher-match.ts'

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
  /** The signed-in person's user id: never offered as someone to write to. */
  me: string
  /** Looks people up by name or a complete contact (GET /auth/v1/people); none offers chats only. */
  findPeople?: (query: string) => Promise<PersonView[]>
  /** Opens a chat of the list; `started` when it was just found or created for a person. */
  onPick: (chat: ChatView, started: boolean) => void
  /** The private chat with the person, created when there is none; a rejection is shown in the dialog. */
  startChat: (person: PersonView) => Promise<ChatView>
  onClose: () => void
}

/** What the switcher offers: a chat of the list, or a person to start a private chat with. */
type Choice = { chat: ChatView; person?: undefined } | { person: PersonView; chat?: undefined }

const optionId = (choice: Choice) =>
  choice.chat ? `switcher-${choice.chat.id}` : `switcher-person-${choice.person.id}`

/**
 * The people a query names, looked up once the typing pauses; whether that look-up is still to
 * come, and whether it failed (the chats still work). Stale answers are dropped.
 */
function usePeopleSearch(query: string, findPeople: QuickSwitcherProps['findPeople']) {
  const [answer, setAnswer] = useState({ query: '', people: [] as PersonView[], failed: false })
  const typed = query.trim()
  useEffect(() => {
    if (!findPeople || typed.length < PEOPLE_SEARCH_MIN_QUERY) return
    let current = true
    const timer = setTimeout(() => {
      findPeople(typed).then(
        (people) => current && setAnswer({ query: typed, people, failed: false }),
        () => current && setAnswer({ query: typed, people: [], failed: true }),
      )
    }, PEOPLE_SEARCH_PAUSE_MS)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [typed, findPeople])
  const asked = findPeople !== undefined && typed.length >= PEOPLE_SEARCH_MIN_QUERY
  const answered = answer.query === typed
  return {
    /** Whether the query is one people are looked up for. */
    asked,
    found: asked && answered ? answer.people : [],
    searching: asked && !answered,
    failed: asked && answered && answer.failed,
  }
}

/** What the switcher says when it offers nothing for `typed`. */
function nothingFound(typed: string, { asked, searching, failed }: ReturnType<typeof usePeopleSearch>): string {
  if (searching) return `No chat called “${typed}”. Looking for people…`
  if (failed) return `No chat called “${typed}”, and people could not be looked up just now.`
  return asked ? `No chat or person called “${typed}”.` : `No chat called “${typed}”.`
}

/**
 * "Go to chat": a modal with one field that finds a chat by name as it is typed (switcher-match.ts),
 * and below the chats, people without a private chat yet, to start one (as Slack's and Element's
 * switchers do). The arrow keys choose, Enter or a click opens, Escape or a click outside closes
 * and gives the focus back. The field is a combobox over a listbox, so screen readers hear the
 * chosen chat or person.
 */
export function QuickSwitcher({ chats, me, findPeople, onPick, startChat, onClose }: QuickSwitcherProps) {
  const [query, setQuery] = useState('')
  const [active, setActive] = useState(0)
  const [failure, setFailure] = useState('')
  const [busy, setBusy] = useState(false)
  const dialog = useRef<HTMLDialogElement>(null)
  const matches = switcherMatches(chats, query)
  const peopleSearch = usePeopleSearch(query, findPeople)
  const people = switcherPeople(peopleSearch.found, chats, me)
  const choices: Choice[] = [...matches.map((chat) => ({ chat })), ...people.map((person) => ({ person }))]
  const chosen = Math.min(active, choices.length - 1)

  useLayoutEffect(() => {
    dialog.current?.showModal()
  }, [])

  /** Closes the dialog first, so the chat opened after it keeps the focus it is given. */
  function open(chat: ChatView, started: boolean) {
    dialog.current?.close()
    onPick(chat, started)
  }

  async function pick(choice: Choice) {
    if (choice.chat) return open(choice.chat, false)
    if (busy) return
    setBusy(true)
    setFailure('')
    try {
      open(await startChat(choice.person), true)
    } catch (error) {
      setFailure(failureText(error))
      setBusy(false)
    }
  }

  function keyDown(event: KeyboardEvent) {
    const step = event.key === 'ArrowDown' ? 1 : event.key === 'ArrowUp' ? -1 : 0
    if (step !== 0 && choices.length > 0) {
      event.preventDefault()
      setActive((chosen + step + choices.length) % choices.length)
    } else if (event.key === 'Enter') {
      event.preventDefault()
      const choice = choices[chosen]
      if (choice) void pick(choice)
    }
  }

  /** One option; `index` is its place among all the choices, chats first. */
  function option(choice: Choice, index: number, children: ComponentChildren) {
    return (
      // biome-ignore lint/a11y/useKeyWithClickEvents: the combobox's field owns the keyboard (arrows, Enter) via aria-activedescendant.
      <div
        key={optionId(choice)}
        tabIndex={-1}
        id={optionId(choice)}
        role="option"
        aria-selected={index === chosen}
        onMouseDown={(event) => event.preventDefault()}
        onClick={() => void pick(choice)}
        onMouseMove={() => index !== chosen && setActive(index)}
      >
        {children}
      </div>
    )
  }

  const typed = query.trim()
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the keyboard closes a modal dialog with Escape by itself.
    <dialog
      class="quick-switcher"
      ref={dialog}
      aria-label="Go to chat"
      aria-busy={busy}
      onClose={onClose}
      // A click on the backdrop lands on the dialog itself, outside its content.
      onClick={(event) => {
        if (event.target === event.currentTarget) event.currentTarget.close()
      }}
    >
      <input
        type="text"
        role="combobox"
        aria-label="Chat or person"
        aria-expanded={choices.length > 0}
        aria-controls="switcher-options"
        aria-autocomplete="list"
        aria-activedescendant={choices[chosen] ? optionId(choices[chosen]) : undefined}
        placeholder="Go to chat or person…"
        autocomplete="off"
        spellcheck={false}
        value={query}
        onInput={(event) => {
          setQuery(event.currentTarget.value)
          setActive(0)
          setFailure('')
        }}
        onKeyDown={keyDown}
      />
      {choices.length === 0 ? (
        <p class="empty" role="status">
          {nothingFound(typed, peopleSearch)}
        </p>
      ) : (
        <div id="switcher-options" role="listbox" aria-label="Chats and people" aria-busy={peopleSearch.searching}>
          {matches.length > 0 && (
            // biome-ignore lint/a11y/useSemanticElements: a group of a listbox's options (ARIA's listbox pattern), not of form fields.
            <div role="group" aria-label="Chats">
              {matches.map((chat, index) =>
                option(
                  { chat },
                  index,
                  <>
                    <Avatar id={avatarIdOf(chat)} name={chat.name} size="small" />
                    <span class="switcher-name">{chat.name}</span>
                    <span class="switcher-kind">{chat.hidden ? `${chatKind(chat)} · hidden` : chatKind(chat)}</span>
                    <UnreadBadge count={chat.unread} />
                  </>,
                ),
              )}
            </div>
          )}
          {people.length > 0 && (
            // biome-ignore lint/a11y/useSemanticElements: a group of a listbox's options (ARIA's listbox pattern), not of form fields.
            <div role="group" aria-label="People">
              <div class="switcher-group" aria-hidden="true">
                People
              </div>
              {people.map((person, index) =>
                option(
                  { person },
                  matches.length + index,
                  <>
                    <Avatar id={person.id} name={person.name} size="small" />
                    <span class="switcher-name">{person.name}</span>
                    <span class="switcher-kind">
                      {person.matched === 'name' ? 'New private chat' : `New private chat · by ${person.matched}`}
                    </span>
                  </>,
                ),
              )}
            </div>
          )}
        </div>
      )}
      {failure && (
        <p class="form-error" role="alert">
          {failure}
        </p>
      )}
      <p class="switcher-help" aria-hidden="true">
        ↑ ↓ to choose · Enter to open · Esc to close
      </p>
    </dialog>
  )
}
