import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { gridMove, gridSlots } from './emoji-grid.ts'
import { type EmojiChoice, findEmoji } from './emoji-list.ts'
import { recentEmoji, rememberEmoji } from './recent-emoji.ts'

interface EmojiPickerProps {
  /** What the picker is for, e.g. "Add a reaction" (its dialog's name). */
  label: string
  onPick: (emoji: string) => void
  /** Escape, or the Close button. */
  onClose: () => void
}

/**
 * A grid of emoji with a search field (by name and keywords, emoji-list.ts), the ones picked last
 * in a "Recently used" row above the others while nothing is typed (recent-emoji.ts). The field
 * has the focus at first; Enter there picks the first match, the down arrow goes into the grid,
 * where the arrow keys, Home and End move (emoji-grid.ts) and Enter or a click picks. Each emoji is
 * a button named for screen readers ("thumbs up"); only the current one is in the tab order.
 */
export function EmojiPicker({ label, onPick, onClose }: EmojiPickerProps) {
  const [query, setQuery] = useState('')
  const [active, setActive] = useState(0)
  // Read once: the row keeps its order while the picker is open.
  const [recent] = useState(() => {
    const all = findEmoji('')
    return recentEmoji().flatMap((emoji) => all.filter((choice) => choice.emoji === emoji))
  })
  const field = useRef<HTMLInputElement>(null)
  const grids = useRef<HTMLDivElement>(null)
  const found = findEmoji(query)
  const recentShown = query.trim() === '' ? recent : []
  const shown = [...recentShown, ...found]
  const slots = gridSlots(recentShown.length, found.length)
  const current = Math.min(active, shown.length - 1)

  useLayoutEffect(() => {
    field.current?.focus()
  }, [])

  function pick(emoji: string) {
    rememberEmoji(emoji)
    onPick(emoji)
  }

  function move(to: number) {
    setActive(to)
    grids.current?.querySelectorAll<HTMLButtonElement>('button')[to]?.focus()
  }

  function gridKey(event: KeyboardEvent) {
    const to = gridMove(slots, current, event.key)
    if (to === undefined) return
    event.preventDefault()
    if (to === 'field') field.current?.focus()
    else move(to)
  }

  /** The buttons of `choices`, which start at `from` among all the shown emoji. */
  function buttons(choices: EmojiChoice[], from: number) {
    return choices.map((choice, offset) => (
      <button
        key={choice.emoji}
        type="button"
        class="emoji"
        aria-label={choice.name}
        title={choice.name}
        tabIndex={from + offset === current ? 0 : -1}
        onClick={() => pick(choice.emoji)}
      >
        {choice.emoji}
      </button>
    ))
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
            pick(found[0].emoji)
          } else if (event.key === 'ArrowDown' && shown.length > 0) {
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
        // biome-ignore lint/a11y/noStaticElementInteractions: the arrow keys move between the grids' buttons.
        <div class="emoji-grids" ref={grids} onKeyDown={gridKey}>
          {recentShown.length > 0 && (
            <>
              <div class="emoji-group-name" aria-hidden="true">
                Recently used
              </div>
              {/* biome-ignore lint/a11y/useSemanticElements: a group of buttons in a grid, not of form fields. */}
              <div class="emoji-grid" role="group" aria-label="Recently used">
                {buttons(recentShown, 0)}
              </div>
              <div class="emoji-group-name" aria-hidden="true">
                All emoji
              </div>
            </>
          )}
          {/* biome-ignore lint/a11y/useSemanticElements: a group of buttons in a grid, not of form fields. */}
          <div class="emoji-grid" role="group" aria-label={recentShown.length > 0 ? 'All emoji' : 'Emoji'}>
            {buttons(found, recentShown.length)}
          </div>
        </div>
      )}
      <button type="button" class="secondary" onClick={onClose}>
        Close
      </button>
    </section>
  )
}
