import { useEffect, useState } from 'preact/hooks'
import { failureText } from '../api/envelope.ts'
import type { EventBus } from '../chat/live/event-bus.ts'
import { fullTime, listTime } from '../chat/message/times.ts'
import { Avatar } from '../people/avatar.tsx'
import { fallbackName } from '../people/people-names.ts'
import { Link } from '../router/link.tsx'
import { MOUNT, routePath } from '../router/routes.ts'
import type { CallApi, CallHistoryEntry } from './call-api.ts'
import { callSummary, isMissed, spokenDuration } from './call-words.ts'

const PAGE = 50

interface CallHistoryProps {
  api: CallApi
  me: string
  bus: EventBus
  /** Calls the person back. */
  onCall: (chatId: string, media: 'audio' | 'video') => void
  /** False while a call is active: calling back waits for it to end. */
  canCall: boolean
}

/**
 * /chat/calls: the person's calls, newest first: who (by name), how it went with its duration,
 * when, and a button to call back; a finished call appears as it ends.
 */
export function CallHistory({ api, me, bus, onCall, canCall }: CallHistoryProps) {
  const [calls, setCalls] = useState<CallHistoryEntry[]>()
  const [hasMore, setHasMore] = useState(false)
  const [error, setError] = useState('')

  async function load(before?: string) {
    try {
      const page = await api.history(before ? { before, limit: PAGE } : { limit: PAGE })
      setCalls((shown) => (before ? [...(shown ?? []), ...page.calls] : page.calls))
      setHasMore(page.has_more)
    } catch (failure) {
      setError(failureText(failure))
    }
  }

  useEffect(() => {
    load()
    return bus.subscribe((event) => {
      if (event === 'resync' || (event.module === 'chat' && event.type === 'CallUpdated')) load()
    })
  }, [api, bus])

  return (
    <article class="call-history" aria-labelledby="call-history-title">
      <header class="conversation-header">
        <Link href={MOUNT} class="back-link" aria-label="Back to the chat list">
          ←
        </Link>
        <h2 id="call-history-title">Calls</h2>
      </header>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {calls === undefined ? (
        !error && <p class="loading">Loading calls…</p>
      ) : calls.length === 0 ? (
        <p class="empty">No calls yet. Open a private chat and press Call to make one.</p>
      ) : (
        <ul>
          {calls.map((call) => {
            const name = call.peer_name || fallbackName(call.peer)
            const started = new Date(call.started_at)
            return (
              <li key={call.call_id} data-call-id={call.call_id}>
                <Avatar id={call.peer} name={name} />
                <div>
                  <Link href={routePath({ name: 'messenger', chatId: call.chat_id })}>{name}</Link>
                  <div class={isMissed(call, me) ? 'call-summary missed' : 'call-summary'}>
                    {callSummary(call, me)}
                    {call.duration > 0 && <span class="visually-hidden"> ({spokenDuration(call.duration)})</span>}
                  </div>
                  <time class="call-when" dateTime={call.started_at} title={fullTime(started)}>
                    {listTime(started)}
                  </time>
                </div>
                <button
                  type="button"
                  class="secondary"
                  disabled={!canCall}
                  aria-label={`Call back ${name}`}
                  onClick={() => onCall(call.chat_id, call.media)}
                >
                  Call back
                </button>
              </li>
            )
          })}
        </ul>
      )}
      {hasMore && calls && (
        <button type="button" class="secondary" onClick={() => load(calls.at(-1)?.call_id)}>
          Older calls
        </button>
      )}
    </article>
  )
}
