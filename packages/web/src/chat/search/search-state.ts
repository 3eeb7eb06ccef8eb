import type { MessageView, SearchPage } from '../../api/chat-types.ts'

/** The results of one search as the panel keeps them between pages. */
export interface SearchResults {
  query: string
  messages: MessageView[]
  hasMore: boolean
  /** The `before` cursor of the next page: the last (oldest) message the server returned. */
  cursor: string | undefined
}

/** The words the server looks for: whitespace-separated, blank ones dropped (docs/chat-api.md, Search). */
export function searchWords(query: string): string[] {
  return query.trim().split(/\s+/u).filter(Boolean)
}

/**
 * Adds a page of search_messages to the results, newest first, each message once. Reaction rows
 * are found by the server too, but they are shown as chips under their message, never as results.
 */
export function addSearchPage(results: SearchResults | undefined, query: string, page: SearchPage): SearchResults {
  const known = results?.query === query ? results.messages : []
  const ids = new Set(known.map((message) => message.id))
  const fresh = page.messages.filter((message) => !ids.has(message.id) && (message.link_kind as string) !== 'reaction')
  return { query, messages: [...known, ...fresh], hasMore: page.has_more, cursor: page.messages.at(-1)?.id }
}

/** Characters of a result shown around the first word found. */
const SNIPPET_LENGTH = 140

/**
 * The part of a result's text to show: the start, or when the first word found lies further in,
 * a window around it with ellipses, so the match is visible.
 */
export function searchSnippet(content: string, words: string[], length = SNIPPET_LENGTH): string {
  const text = content.replace(/\s+/gu, ' ').trim()
  if (text.length <= length) return text
  const lower = text.toLowerCase()
  const found = words
    .map((word) => lower.indexOf(word.toLowerCase()))
    .filter((index) => index >= 0)
    .sort((a, b) => a - b)[0]
  const start =
    found === undefined || found < length / 2 ? 0 : Math.min(found - Math.floor(length / 4), text.length - length)
  const end = Math.min(start + length, text.length)
  return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`
}
