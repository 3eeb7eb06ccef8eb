import type { ChatView } from '../../api/chat-types.ts'
import { foldText } from '../../fold-text.ts'

/** Most chats the switcher offers at once. */
export const SWITCHER_LIMIT = 8

/** 0: the name starts with the query; 1: one of its words does; 2: it holds it elsewhere; -1: no match. */
function rank(name: string, query: string): number {
  const at = name.indexOf(query)
  if (at === -1) return -1
  if (at === 0) return 0
  return /[\p{L}\p{N}]/u.test(name[at - 1]!) ? 2 : 1
}

/**
 * The chats a quick-switcher query names, best first: names that start with it, then names with a
 * word that does, then names holding it anywhere; within each, the list's own order (pinned, then
 * newest activity), chats the person hid after the others. An empty query offers the first chats of
 * the list. At most SWITCHER_LIMIT.
 */
export function switcherMatches(chats: readonly ChatView[], query: string): ChatView[] {
  const ordered = [...chats.filter((chat) => !chat.hidden), ...chats.filter((chat) => chat.hidden)]
  const wanted = foldText(query.trim())
  if (wanted === '') return ordered.slice(0, SWITCHER_LIMIT)
  const ranked: Array<{ chat: ChatView; rank: number; index: number }> = []
  ordered.forEach((chat, index) => {
    const found = rank(foldText(chat.name), wanted)
    if (found >= 0) ranked.push({ chat, rank: found, index })
  })
  ranked.sort((a, b) => a.rank - b.rank || a.index - b.index)
  return ranked.slice(0, SWITCHER_LIMIT).map(({ chat }) => chat)
}
