import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { findEmoji } from './emoji-list.ts'

/** Emoji per row of the grid: the arrow keys move by one, or by a row up and down. */
const COLUMNS = 8

interface EmojiPickerProps {
  /** What the picker is for, e.g. "Add a reaction" (its dialog's name). */
  label: string
  onPick: (emoji: string) => void
  /** Escape, or the Close button. */
  onClose: () => void
}

/**
 * A grid of emoji with a search field (by name and keywords, emoji-list.ts). The field has the
 * focus at first; Enter there picks the first match, the down arrow goes into the grid, where the
 * arrow keys, Home and End move and Enter or a click picks. Each emoji is a button named for screen
 * readers ("thumbs up"); only the current one is in the tab order.
 */
export function EmojiPicker({ label, onPick, onClose }: EmojiPickerProps) {
  const [query, setQuery] = useState('')
  const [active, setActive] = useState(0)
  const field = useRef<HTMLInputElement>(null)
  const grid = useRef<HTMLDivElement>(null)
  const found = findEmoji(query)
  const current = Math.min(active, found.length - 1)

  useLayoutEffect(() => {
    field.current?.focus()
  }, [])

  function move(to: number) {
    const next = Math.max(0, Math.min(found.length - 1, to))
    setActive(next)
    grid.current?.querySelectorAll<HTMLButtonElement>('button')[next]?.focus()
  }

  function gridKey(event: KeyboardEvent) {
    const steps: Record<string, number> = {
      ArrowRight: 1,
      ArrowLeft: -1,
      ArrowDown: COLUMNS,
      ArrowUp: -COLUMNS,
      Home: -current,
      End: found.length - 1 - current,
    }
    const step = steps[event.key]
    if (step === undefined) return
    event.preventDefault()
    if (event.key === 'ArrowUp' && current < COLUMNS) field.current?.focus()
    else move(current + step)
  }

  return (
    <section
      class="emoji-picker"
      role="dialog"
      aria-label={label}
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return
        event.stopPropagation()
        onClose()
      }}
    >
      <input
        ref={field}
        type="search"
        aria-label="Find an emoji"
        placeholder="Find an emoji"
        autocomplete="off"
        value={query}
        onInput={(event) => {
          setQuery(event.currentTarget.value)
          setActive(0)
        }}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && found[0]) {
            event.preventDefault()
            onPick(found[0].emoji)
          } else if (event.key === 'ArrowDown' && found.length > 0) {
            event.preventDefault()
            move(0)
          }
        }}
      />
      {found.length === 0 ? (
        <p class="empty" role="status">
          No emoji called “{query.trim()}”.
        </p>
      ) : (
        // biome-ignore lint/a11y/noStaticElementInteractions: the arrow keys move between the grid's buttons.
        <div class="emoji-grid" ref={grid} onKeyDown={gridKey}>
          {found.map((choice, index) => (
            <button
              key={choice.emoji}
              type="button"
              class="emoji"
              aria-label={choice.name}
              title={choice.name}
              tabIndex={index === current ? 0 : -1}
              onClick={() => onPick(choice.emoji)}
            >
              {choice.emoji}
            </button>
          ))}
        </div>
      )}
      <button type="button" class="secondary" onClick={onClose}>
        Close
      </button>
    </section>
  )
}
