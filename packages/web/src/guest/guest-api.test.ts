import assert from 'node:assert/strict'
import { forEachDialect, until } from '@atrium/platform/testing'
import { EventSource } from 'eventsource'
import { startSignInWorld } from '../../../gateway/test/sign-in.ts'
import { createChatApi } from '../api/chat-api.ts'
import { createApiClient } from '../api/client.ts'
import { isFailure } from '../api/envelope.ts'
import { type BroadcastEvent, type EventSourceConstructor, type LiveStatus, openLiveEvents } from '../live-events.ts'
import { createGuestChatApi } from './guest-api.ts'
import { guestSubscribeUrl } from './guest-live.ts'

const ROUTES = [{ Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] }]

async function startWorld(t: Parameters<typeof startSignInWorld>[0], dialect: Parameters<typeof startSignInWorld>[1]) {
  const world = await startSignInWorld(t, dialect, { settings: { Proxy: { Routes: ROUTES } } })
  const alice = await world.signIn('alice@example.com')
  const client = createApiClient({
    base: world.url,
    deviceGuid: 'device-guid-alice-01',
    fetch: (input, init = {}) => {
      const headers = new Headers(init.headers)
      headers.set('cookie', alice.cookie)
      return fetch(input, { ...init, headers })
    },
  })
  client.setCsrf(alice.csrf)
  return { world, alice: { chat: createChatApi(client), crmId: String(alice.user.crmId) } }
}

forEachDialect(
  'a guest device joins a personal invite twice into the same conversation, and its message reaches the inviter',
  async (t, dialect) => {
    const { world, alice } = await startWorld(t, dialect)
    const invite = await alice.chat.createInvite('personal')
    assert.equal(invite.path, `/chat?code=${invite.code}`)

    const device = '3f9c2a7e-1b4d-4c8a-9e2f-5a6b7c8d9e01'
    const guest = createGuestChatApi(invite.code, device, { base: world.url })
    const first = await guest.joinInvite(invite.code)
    assert.equal(first.guest, true)
    assert.equal(first.chat.peer, alice.crmId)
    await guest.sendMessage(first.chat.id, 'Hello from a guest')

    const again = await createGuestChatApi(invite.code, device, { base: world.url }).joinInvite(invite.code)
    assert.equal(again.chat.id, first.chat.id)
    assert.equal(again.member, first.member)

    const page = await alice.chat.getChatMessages(first.chat.id)
    assert.deepEqual(
      page.messages.map((message) => [message.owner, message.content]),
      [[first.member, 'Hello from a guest']],
    )
    const other = await createGuestChatApi(invite.code, 'another-device-0002', { base: world.url }).joinInvite(
      invite.code,
    )
    assert.notEqual(other.chat.id, first.chat.id)
  },
)

forEachDialect('a guest of a group invite becomes a member but may not create chats or invites', async (t, dialect) => {
  const { world, alice } = await startWorld(t, dialect)
  const group = await alice.chat.createChat({ type: 2, name: 'Open house' })
  const invite = await alice.chat.createInvite('group', group.id)
  const guest = createGuestChatApi(invite.code, 'guest-device-0001', { base: world.url })
  const joined = await guest.joinInvite(invite.code)
  assert.equal(joined.chat.id, group.id)
  assert.equal(joined.kind, 'group')
  const members = await alice.chat.getChatMembers(group.id)
  assert.deepEqual(members.members.map((member) => member.member).sort(), [alice.crmId, joined.member].sort())
  await assert.rejects(guest.createInvite('personal'), (error) => isFailure(error, 'GuestNotAllowed'))
  await assert.rejects(guest.createChat({ type: 2, name: 'Mine' }), (error) => isFailure(error, 'GuestNotAllowed'))
  // Without the invite code the same device is nobody.
  const stranger = createChatApi(createApiClient({ base: world.url, deviceGuid: 'guest-device-0001' }))
  await assert.rejects(stranger.getChatInfo(group.id), (error) => isFailure(error, 'Unauthenticated'))
})

forEachDialect(
  'the guest page’s live client receives the inviter’s group message over the guest’s stream, without a session',
  async (t, dialect) => {
    const { world, alice } = await startWorld(t, dialect)
    const group = await alice.chat.createChat({ type: 2, name: 'Open house' })
    const invite = await alice.chat.createInvite('group', group.id)
    const device = 'guest-device-0001'
    const guest = createGuestChatApi(invite.code, device, { base: world.url })
    await guest.joinInvite(invite.code)
    const events: BroadcastEvent[] = []
    const statuses: LiveStatus[] = []
    const live = openLiveEvents({
      url: guestSubscribeUrl(`${world.url}/auth/v1/subscribe`, invite.code, device),
      EventSource: EventSource as unknown as EventSourceConstructor,
      onEvent: (event) => events.push(event),
      onStatus: (status) => statuses.push(status),
    })
    t.after(() => live.close())
    await until(() => statuses.includes('live'), 'the guest’s stream to open')

    await alice.chat.sendMessage(group.id, 'Welcome to the open house')
    await until(() => events.some((event) => event.type === 'NewChatMessage'), 'the message on the guest’s stream')
    const message = events.find((event) => event.type === 'NewChatMessage')!
    assert.equal(message.data.content, 'Welcome to the open house')
    assert.equal(message.data.chat_id, group.id)
    assert.ok(!statuses.includes('offline'), JSON.stringify(statuses))
  },
)
