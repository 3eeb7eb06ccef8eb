import { useEffect, useRef, useState } from 'preact/hooks'
import type { PersonView } from '../api/auth-api.ts'
import { failureText } from '../api/envelope.ts'
import { Avatar } from './avatar.tsx'
import { PEOPLE_SEARCH_MIN_QUERY, PEOPLE_SEARCH_PAUSE_MS, usePeopleNames } from './people-names.ts'

interface PeoplePickerProps {
  /** Prefix of the element ids, unique on the page. */
  id: string
  label: string
  /** Called with the chosen person; the picker clears itself when it resolves. */
  onPick: (person: { id: string; name: string }) => Promise<void> | void
  disabled?: boolean
}

/**
 * Finds a person by name or by a complete email or phone (GET /auth/v1/people) in a combobox:
 * arrows move through the results, Enter picks, Escape closes. A user id typed as digits stays a
 * fallback, offered as its own option.
 */
export function PeoplePicker({ id, label, onPick, disabled }: PeoplePickerProps) {
  const people$ = usePeopleNames()
  const [query, setQuery] = useState('')
  const [people, setPeople] = useState<PersonView[]>([])
  const [active, setActive] = useState(-1)
  const [note, setNote] = useState('')
  const [open, setOpen] = useState(false)
  const seq = useRef(0)

  const typed = query.trim()
  const byId = /^[1-9][0-9]{0,15}$/.test(typed)
  const options: Array<{ id: string; name: string; hint: string }> = [
    ...people.map((person) => ({
      id: person.id,
      name: person.name,
      hint: person.matched === 'name' ? '' : `matches the ${person.matched} you typed`,
    })),
    ...(byId ? [{ id: typed, name: `User id ${typed}`, hint: 'by user id' }] : []),
  ]

  useEffect(() => {
    const mine = ++seq.current
    if (typed.length < PEOPLE_SEARCH_MIN_QUERY || byId) {
      setPeople([])
      setNote(typed.length > 0 && !byId ? `Type at least ${PEOPLE_SEARCH_MIN_QUERY} characters.` : '')
      return
    }
    const timer = setTimeout(() => {
      if (!people$) return
      people$
        .search(typed)
        .then((found) => {
          if (mine !== seq.current) return
          setPeople(found)
          setActive(found.length > 0 ? 0 : -1)
          setNote(found.length === 0 ? `Nobody found for “${typed}”. Try a name, or a full email address.` : '')
        })
        .catch((failure) => mine === seq.current && setNote(failureText(failure)))
    }, PEOPLE_SEARCH_PAUSE_MS)
    return () => clearTimeout(timer)
  }, [people$, typed, byId])

  async function pick(index: number) {
    const option = options[index]
    if (!option) return
    await onPick({ id: option.id, name: option.name })
    setQuery('')
    setPeople([])
    setOpen(false)
    setActive(-1)
  }

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === 'ArrowDown') {
      event.preventDefault()
      setOpen(true)
      setActive((index) => Math.min(options.length - 1, index + 1))
    } else if (event.key === 'ArrowUp') {
      event.preventDefault()
      setActive((index) => Math.max(0, index - 1))
    } else if (event.key === 'Enter') {
      event.preventDefault()
      void pick(Math.max(active, 0))
    } else if (event.key === 'Escape' && open && options.length > 0) {
      // Closes the results only; a panel around the picker stays open.
      event.stopPropagation()
      setOpen(false)
    }
  }

  const listId = `${id}-results`
  const expanded = open && options.length > 0
  return (
    <div class="people-picker">
      <label for={`${id}-input`}>{label}</label>
      <input
        id={`${id}-input`}
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={expanded}
        aria-controls={listId}
        aria-activedescendant={expanded && active >= 0 ? `${id}-option-${active}` : undefined}
        aria-describedby={`${id}-hint`}
        autoComplete="off"
        disabled={disabled}
        value={query}
        onInput={(event) => {
          setQuery(event.currentTarget.value)
          setOpen(true)
        }}
        onKeyDown={onKeyDown}
      />
      <p id={`${id}-hint`} class="hint">
        A name, or someone's full email address or phone number.
      </p>
      <div id={listId} role="listbox" aria-label={label} class="people-results" hidden={!expanded}>
        {options.map((option, index) => (
          // biome-ignore lint/a11y/useKeyWithClickEvents: the combobox input owns the keyboard (arrows, Enter) via aria-activedescendant
          <div
            key={option.id}
            tabIndex={-1}
            id={`${id}-option-${index}`}
            role="option"
            aria-selected={index === active}
            class={index === active ? 'active' : undefined}
            onMouseDown={(event) => event.preventDefault()}
            onClick={() => void pick(index)}
          >
            <Avatar id={option.id} name={option.name} size="small" />
            <span class="person-name">{option.name}</span>
            {option.hint && <span class="person-hint">{option.hint}</span>}
          </div>
        ))}
      </div>
      {note && (
        <p class="hint" role="status">
          {note}
        </p>
      )}
    </div>
  )
}
