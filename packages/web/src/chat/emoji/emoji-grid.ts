/** Emoji per row of the picker's grid. */
export const COLUMNS = 8

/**
 * Where each of the picker's emoji sits, as a place in rows of COLUMNS: the recent ones fill the
 * first row, and the rest start on a row of their own (`recent` = 0: they start at once).
 */
export function gridSlots(recent: number, rest: number): number[] {
  const start = recent === 0 ? 0 : Math.ceil(recent / COLUMNS) * COLUMNS
  return [
    ...Array.from({ length: recent }, (_, index) => index),
    ...Array.from({ length: rest }, (_, index) => start + index),
  ]
}

/**
 * The emoji the grid's key moves to from `current` (indexes into `slots`): Left and Right go to
 * the one before or after, Up and Down to the one in the same column of the row above or below
 * (the row's last one when that row is shorter), Home and End to the first and last. `'field'`:
 * Up from the first row goes back to the search field; undefined: not a key of the grid.
 */
export function gridMove(slots: readonly number[], current: number, key: string): number | 'field' | undefined {
  const last = slots.length - 1
  if (key === 'ArrowRight') return Math.min(last, current + 1)
  if (key === 'ArrowLeft') return Math.max(0, current - 1)
  if (key === 'Home') return 0
  if (key === 'End') return last
  if (key !== 'ArrowUp' && key !== 'ArrowDown') return undefined
  const row = Math.floor(slots[current]! / COLUMNS)
  const column = slots[current]! % COLUMNS
  const rows = [...new Set(slots.map((slot) => Math.floor(slot / COLUMNS)))]
  const target = rows[rows.indexOf(row) + (key === 'ArrowUp' ? -1 : 1)]
  if (target === undefined) return key === 'ArrowUp' ? 'field' : current
  let found = current
  slots.forEach((slot, index) => {
    if (Math.floor(slot / COLUMNS) === target && slot % COLUMNS <= column) found = index
  })
  return found
}
