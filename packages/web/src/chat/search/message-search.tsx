import { ChatMessFlags } from '@atrium/platform/flags'
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView, MessageView } from '../../api/chat-types.ts'
import { failureText } from '../../api/envelope.ts'
import { callSummary, parseCallRecord } from '../../calls/call-words.ts'
import { addSearchPage, type SearchResults, searchSnippet, searchWords } from './search-state.ts'

interface MessageSearchProps {
  api: ChatApi
  /** The open chat: searched alone unless the person picks all chats. */
  chat: ChatView
  /** A result was picked. */
  onOpen: (message: MessageView) => void
  onClose: () => void
  /** The signed-in person's id: a call found is said from their side. */
  me: string
}

/** A call found by the search, in words instead of its record. */
function callText(content: string, me: string): string {
  const record = parseCallRecord(content)
  return record ? `📞 ${callSummary(record, me)}` : '📞 Call'
}

/** Results per page. */
const PAGE = 20

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/**
 * Search in the open chat or in all of the caller's chats (search_messages): whole or partial
 * words, newest first, with more pages on demand. Picking a result opens it.
 */
export function MessageSearch({ api, chat, onOpen, onClose, me }: MessageSearchProps) {
  const [query, setQuery] = useState('')
  const [allChats, setAllChats] = useState(false)
  const [results, setResults] = useState<SearchResults>()
  const [chatNames, setChatNames] = useState<Map<string, string>>()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const field = useRef<HTMLInputElement>(null)

  useLayoutEffect(() => field.current?.focus(), [])

  // Results from other chats name their chat; the names come from the chat list.
  useEffect(() => {
    if (!allChats || chatNames) return
    api
      .getChats()
      .then((chats) => setChatNames(new Map(chats.map((known) => [known.id, known.name]))))
      .catch((failure) => setError(failureText(failure)))
  }, [api, allChats, chatNames])

  async function search(more: boolean) {
    const q = more && results ? results.query : query.trim()
    if (searchWords(q).length === 0 || busy) return
    setBusy(true)
    setError('')
    try {
      const page = await api.searchMessages(q, {
        limit: PAGE,
        ...(allChats ? {} : { chat_id: chat.id }),
        ...(more && results?.cursor ? { before: results.cursor } : {}),
      })
      setResults((known) => addSearchPage(more ? known : undefined, q, page))
    } catch (failure) {
      setError(failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  const words = results ? searchWords(results.query) : []
  return (
    <section
      class="message-search"
      aria-label="Search messages"
      onKeyDown={(event) => {
        if (event.key === 'Escape') onClose()
      }}
    >
      <form
        class="search-form"
        onSubmit={(event) => {
          event.preventDefault()
          search(false)
        }}
      >
        <label for="message-search-text" class="visually-hidden">
          Search messages
        </label>
        <input
          id="message-search-text"
          ref={field}
          type="search"
          placeholder={allChats ? 'Search all chats' : `Search in ${chat.name}`}
          maxLength={200}
          value={query}
          onInput={(event) => setQuery(event.currentTarget.value)}
        />
        <button type="submit" disabled={busy || searchWords(query).length === 0}>
          Search
        </button>
        <label class="search-scope">
          <input
            type="checkbox"
            checked={allChats}
            onChange={(event) => {
              setAllChats(event.currentTarget.checked)
              setResults(undefined)
            }}
          />
          All chats
        </label>
        <button type="button" class="secondary" onClick={onClose}>
          Close search
        </button>
      </form>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {results && (
        <div class="search-results" aria-live="polite">
          {results.messages.length === 0 ? (
            <p class="empty">No messages found for “{results.query}”.</p>
          ) : (
            <ol class="search-result-list">
              {results.messages.map((message) => (
                <li key={message.id}>
                  <button type="button" class="search-result" onClick={() => onOpen(message)}>
                    <span class="search-result-meta">
                      {message.chat_id === chat.id ? chat.name : (chatNames?.get(message.chat_id) ?? 'Another chat')}
                      {' · '}
                      {dateFormat.format(new Date(message.time))}
                    </span>
                    <span class="search-result-text">
                      {message.flags & ChatMessFlags.Call
                        ? callText(message.content, me)
                        : searchSnippet(message.content, words)}
                    </span>
                  </button>
                </li>
              ))}
            </ol>
          )}
          {results.hasMore && (
            <button type="button" class="secondary" disabled={busy} onClick={() => search(true)}>
              More results
            </button>
          )}
        </div>
      )}
    </section>
  )
}
