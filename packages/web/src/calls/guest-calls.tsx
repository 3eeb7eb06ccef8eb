import { useMemo } from 'preact/hooks'
import type { ChatView } from '../api/chat-types.ts'
import type { ApiClient } from '../api/client.ts'
import type { EventBus } from '../chat/live/event-bus.ts'
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
  /** Where the long-polled call events go (the conversation's call rows follow them too). */
  bus: EventBus
}

/**
 * Calls for the guest of a personal invite (spec: "Authentication" 7): Call and Video call to the
 * person who invited them, the ring of their calls, and the call screen, with the call events
 * long-polled (guests have no SSE stream).
 */
export function GuestCalls({ client, chat, me, bus }: GuestCallsProps) {
  const api = useMemo(() => createCallApi(client), [client])
  useGuestCallEvents(api, bus, true)
  const calls = useCalls({ api, me, bus, enabled: true })
  const canCall = calls.phase.kind === 'idle' || calls.phase.kind === 'ended'
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
