import { localStorageOrNone } from '../../start-up.ts'
import { EMOJI_GROUPS } from './emoji-list.ts'

/** Where this browser keeps the emoji picked last. */
const KEY = 'atrium.emoji.recent'
/** How many it keeps: one row of the picker's grid. */
export const RECENT_LIMIT = 8

const offered = new Set(EMOJI_GROUPS.flatMap(({ choices }) => choices.map(({ emoji }) => emoji)))

/**
 * The emoji picked last in this browser, newest first, for the picker's "Recently used" row (as
 * Slack's and Element's pickers have). Only emoji the picker offers count, so a stored value from
 * an older list, or one edited by hand, shows nothing it cannot name; blocked or broken storage
 * gives none.
 */
export function recentEmoji(storage: Storage | undefined = localStorageOrNone()): string[] {
  let stored: unknown
  try {
    stored = JSON.parse(storage?.getItem(KEY) ?? '[]')
  } catch {
    return []
  }
  if (!Array.isArray(stored)) return []
  const kept = stored.filter((emoji): emoji is string => typeof emoji === 'string' && offered.has(emoji))
  return [...new Set(kept)].slice(0, RECENT_LIMIT)
}

/** Puts a picked emoji first among the recent ones; a full or blocked storage keeps the old row. */
export function rememberEmoji(emoji: string, storage: Storage | undefined = localStorageOrNone()): void {
  if (!offered.has(emoji)) return
  const next = [emoji, ...recentEmoji(storage).filter((other) => other !== emoji)].slice(0, RECENT_LIMIT)
  try {
    storage?.setItem(KEY, JSON.stringify(next))
  } catch {}
}
