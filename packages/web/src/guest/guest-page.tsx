import { useEffect, useMemo, useState } from 'preact/hooks'
import type { UserView } from '../api/auth-api.ts'
import { createChatApi } from '../api/chat-api.ts'
import type { JoinedInvite } from '../api/chat-types.ts'
import { failureText, isFailure } from '../api/envelope.ts'
import { GuestCalls } from '../calls/guest-calls.tsx'
import { createEventBus } from '../chat/live/event-bus.ts'
import { chatKind } from '../chat/message/names.ts'
import { guestFilePath } from '../files/file-urls.ts'
import { Avatar } from '../people/avatar.tsx'
import { createPeopleNames, PeopleNamesContext } from '../people/people-names.ts'
import { navigate } from '../router/navigation.ts'
import { MOUNT, routePath } from '../router/routes.ts'
import { MessageScreen } from '../screens/message-screen.tsx'
import type { Services } from '../services.ts'
import { createGuestClient } from './guest-api.ts'
import { GuestConversation } from './guest-conversation.tsx'
import { guestSubscribeUrl, useGuestLiveEvents } from './guest-live.ts'
import { GuestName } from './guest-name.tsx'

interface GuestPageProps {
  code: string
  services: Services
  /** The signed-in user, if any: they join a group invite as themselves. */
  user: UserView | undefined
}

/** The chat module's invite codes: 8–64 letters and digits (docs/chat-api.md, join_invite). */
const INVITE_CODE = /^[A-Za-z0-9]{8,64}$/

const NOT_VALID = 'This invite link is not valid: it was mistyped or has been revoked.'

type Joining = { state: 'joining' } | { state: 'joined'; joined: JoinedInvite } | { state: 'failed'; error: unknown }

/**
 * `/chat?code=<invite_code>` (spec: "Chat client routes"): a visitor without a session joins as
 * the guest of this device, identified by the invite code and the device GUID kept in local
 * storage, so the same code on the same device always opens the same conversation. A signed-in
 * user joins a group invite as a member and goes on in the messenger.
 */
export function GuestPage({ code, services, user }: GuestPageProps) {
  const guestClient = useMemo(
    () => (user ? undefined : createGuestClient(code, services.client.deviceGuid)),
    [code, services, user],
  )
  const api = useMemo(() => (guestClient ? createChatApi(guestClient) : services.chat), [guestClient, services])
  // Guests cannot search people; they see the names of those who share their chat (get_profiles).
  const names = useMemo(() => createPeopleNames(api.getProfiles, async () => []), [api])
  const [joining, setJoining] = useState<Joining>({ state: 'joining' })
  // The guest's live events, for the conversation, the call screen and the call rows.
  const events = useMemo(createEventBus, [])
  const live = useGuestLiveEvents(
    guestSubscribeUrl(services.subscribeUrl, code, services.client.deviceGuid),
    events,
    guestClient !== undefined && joining.state === 'joined',
  )

  useEffect(() => {
    if (!INVITE_CODE.test(code)) return
    setJoining({ state: 'joining' })
    api
      .joinInvite(code)
      .then((joined) => {
        if (joined.guest) setJoining({ state: 'joined', joined })
        else navigate(routePath({ name: 'messenger', chatId: joined.chat.id }), { replace: true })
      })
      .catch((error: unknown) => setJoining({ state: 'failed', error }))
  }, [api, code])

  if (!INVITE_CODE.test(code)) {
    return (
      <MessageScreen title="Could not join">
        <p>{NOT_VALID}</p>
      </MessageScreen>
    )
  }
  if (joining.state === 'joining') return <p class="loading guest-loading">Joining the conversation…</p>
  if (joining.state === 'failed') {
    const { error } = joining
    const text = isFailure(error, 'InviteNotFound', 'Unauthenticated')
      ? NOT_VALID
      : isFailure(error, 'WrongChatType')
        ? 'This invite is for guests. You are signed in: open a private chat with the person who sent it instead.'
        : failureText(error)
    return (
      <MessageScreen title="Could not join">
        <p>{text}</p>
      </MessageScreen>
    )
  }
  const { chat, member, calls_allowed } = joining.joined
  const me: UserView = { crmId: member, name: '', scopes: [], contacts: [] }
  return (
    <PeopleNamesContext.Provider value={names}>
      <div class="guest">
        <header class="conversation-header guest-header">
          <div class="conversation-title-with-avatar">
            <Avatar id={chat.peer !== '0' ? chat.peer : chat.id} name={chat.name} />
            <div>
              <h1>{chat.name}</h1>
              <p class="chat-kind">
                {chatKind(chat)} · you are a guest · <a href={routePath({ name: 'sign-in', next: MOUNT })}>Sign in</a>
              </p>
            </div>
          </div>
          {calls_allowed && guestClient && (
            <GuestCalls client={guestClient} chat={chat} me={member} bus={events} live={live} />
          )}
          <GuestName api={api} />
        </header>
        <GuestConversation
          api={api}
          chat={chat}
          me={me}
          loadFile={(messageId) => services.client.getBlob(guestFilePath(code, messageId))}
          bus={events}
          live={live}
        />
      </div>
    </PeopleNamesContext.Provider>
  )
}
