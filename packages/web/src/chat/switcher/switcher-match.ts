import type { PersonView } from '../../api/auth-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { foldText } from '../../fold-text.ts'
import { ChatType } from '../message/names.ts'

/** Most chats the switcher offers at once. */
export const SWITCHER_LIMIT = 8
/** Most people it offers to start a private chat with. */
export const SWITCHER_PEOPLE_LIMIT = 5

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

/**
 * The people a people search found that the switcher offers to start a private chat with: not the
 * person themself, and nobody they already have a private chat with (that chat, named after
 * them, is found among the chats, hidden or not). In the search's order, at most
 * SWITCHER_PEOPLE_LIMIT.
 */
export function switcherPeople(found: readonly PersonView[], chats: readonly ChatView[], me: string): PersonView[] {
  const peers = new Set(chats.filter((chat) => chat.type === ChatType.Private).map((chat) => chat.peer))
  return found.filter((person) => person.id !== me && !peers.has(person.id)).slice(0, SWITCHER_PEOPLE_LIMIT)
}
