const UNITS = ['KB', 'MB', 'GB', 'TB'] as const

/**
 * A byte count as people read it, in powers of 1024 as Telegram and Element show sizes: `0 B`,
 * `940 B`, `1.5 KB`, `12 MB`; one decimal below 10 of a unit, none above.
 */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—'
  if (bytes < 1024) return `${Math.round(bytes)} B`
  let value = bytes / 1024
  let unit = 0
  // Round first, so 1023.96 KB reads "1.0 MB" and never "1024 KB".
  while (unit < UNITS.length - 1 && (value >= 10 ? Math.round(value) : Math.round(value * 10) / 10) >= 1024) {
    value /= 1024
    unit += 1
  }
  const shown = value >= 10 ? Math.round(value).toString() : (Math.round(value * 10) / 10).toFixed(1)
  return `${shown} ${UNITS[unit]}`
}

/** Progress in words for a screen reader and the tray: `3.2 MB of 12 MB`. */
export function formatProgress(sent: number, total: number): string {
  return `${formatSize(sent)} of ${formatSize(total)}`
}
