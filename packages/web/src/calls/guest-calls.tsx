import { useMemo } from 'preact/hooks'
import type { ChatView } from '../api/chat-types.ts'
import type { ApiClient } from '../api/client.ts'
import type { EventBus } from '../chat/live/event-bus.ts'
import type { LiveStatus } from '../live-events.ts'
import { fallbackName } from '../people/people-names.ts'
import { createCallApi } from './call-api.ts'
import { CallScreen } from './call-screen.tsx'
import { useGuestCallEvents } from './guest-call-events.ts'
import { useCalls } from './use-calls.ts'

interface GuestCallsProps {
  /** The guest's API client (X-Invite-Code on every request). */
  client: ApiClient
  chat: ChatView
  /** The guest's member id. */
  me: string
  /** The guest's live events (the conversation's call rows follow them too). */
  bus: EventBus
  /** The guest's SSE stream: while it is `offline`, call events are long-polled into `bus` instead. */
  live: LiveStatus
}

/**
 * Calls for the guest of a personal invite (spec: "Authentication" 7): Call and Video call to the
 * person who invited them, the ring of their calls, and the call screen. The call events come with
 * the guest's SSE stream; while it is down they are long-polled (call/events).
 */
export function GuestCalls({ client, chat, me, bus, live }: GuestCallsProps) {
  const api = useMemo(() => createCallApi(client), [client])
  useGuestCallEvents(api, bus, live === 'offline')
  const calls = useCalls({ api, me, bus, enabled: true, live: live === 'live' })
  // Not before the stream (or the fallback) follows the call's events: the answer would go unseen.
  const canCall = (calls.phase.kind === 'idle' || calls.phase.kind === 'ended') && live !== 'connecting'
  const nameOf = (id: string) => (id === chat.peer ? chat.name : id === me ? 'You' : fallbackName(id))
  return (
    <>
      {!chat.archived && (
        <div class="header-calls">
          <button
            type="button"
            class="secondary"
            disabled={!canCall}
            onClick={() => void calls.start(chat.id, 'audio')}
          >
            Call
          </button>
          <button
            type="button"
            class="secondary"
            disabled={!canCall}
            onClick={() => void calls.start(chat.id, 'video')}
          >
            Video call
          </button>
        </div>
      )}
      <CallScreen calls={calls} me={me} nameOf={nameOf} />
    </>
  )
}
