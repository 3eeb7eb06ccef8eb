import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { forEachDialect, json } from '@atrium/platform/testing'
import { openEvents, startEventsWorld } from '../../test/events.ts'

type World = Awaited<ReturnType<typeof startEventsWorld>>

const DEVICE = 'guest-device-0001'
const OTHER_DEVICE = 'guest-device-0002'

/** A world whose guest streams check their invite every second (FAST_EVENTS). */
function guestWorld(t: TestContext, dialect: Parameters<typeof startEventsWorld>[1]) {
  return startEventsWorld(t, dialect)
}

/** A personal invite of `owner`, joined by a guest on `device`: the guest's chat calls (straight to the chat module, as the gateway passes them) and ids. */
async function invitedGuest(world: World, owner: Awaited<ReturnType<World['signedIn']>>, device = DEVICE) {
  const invite = await owner.post('create_invite', { kind: 'personal' })
  const chat = world.chat.client.guest(invite.code, device)
  const joined = await chat.ok('join_invite', { code: invite.code })
  const query = `?code=${invite.code}&device_guid=${device}`
  return { code: invite.code as string, chatId: joined.chat.id as string, member: joined.member as string, chat, query }
}

/** The stream of a guest without a session: only the invite code and device in the query. */
function openGuestEvents(t: TestContext, world: World, query: string) {
  return openEvents(t, world.gateway.url, '', { query })
}

forEachDialect(
  'a guest’s stream receives a member’s message live, and the member’s stream receives the guest’s',
  async (t, dialect) => {
    const world = await guestWorld(t, dialect)
    const alice = await world.signedIn()
    const guest = await invitedGuest(world, alice)
    const guestStream = openGuestEvents(t, world, guest.query)
    const aliceStream = openEvents(t, world.gateway.url, alice.cookie)
    await Promise.all([guestStream.opened(), aliceStream.opened()])

    const sent = await alice.post('send_message', { chat_id: guest.chatId, content: 'Welcome, guest' })
    await guestStream.until(() => guestStream.contents().length === 1, 'Alice’s message on the guest’s stream')
    await guest.chat.ok('send_message', { chat_id: guest.chatId, content: 'Thanks, Alice' })
    await aliceStream.until(() => aliceStream.contents().includes('Thanks, Alice'), 'the guest’s message on Alice’s')
    await guestStream.until(() => guestStream.contents().length === 2, 'the guest’s own message on its stream')

    assert.deepEqual(guestStream.contents(), ['Welcome, guest', 'Thanks, Alice'])
    const [event] = guestStream.events.filter((item) => item.type === 'NewChatMessage')
    assert.equal(event!.data.message_id, sent.id)
    assert.equal(event!.data.chat_id, guest.chatId)
    assert.equal(event!.data.sender, String(alice.crmId))
    assert.deepEqual(aliceStream.contents(), ['Welcome, guest', 'Thanks, Alice'])
    // The gateway polled the subject it derived: the guest id the chat module named, never the code itself.
    assert.ok(world.proxy.calls.some((call) => call.subjects.includes(`code:${guest.member}`)))
    assert.ok(world.proxy.calls.every((call) => !call.subjects.some((subject) => subject.includes(guest.code))))
  },
)

forEachDialect(
  'edits, reactions and deletes reach the guest, and a reconnect with since replays what it missed',
  async (t, dialect) => {
    const world = await guestWorld(t, dialect)
    const alice = await world.signedIn()
    const guest = await invitedGuest(world, alice)
    const first = openGuestEvents(t, world, guest.query)
    await first.opened()
    const sent = await alice.post('send_message', { chat_id: guest.chatId, content: 'one' })
    await first.until(() => first.contents().length === 1, 'the first message')
    const seen = first.maxTick()
    first.close()

    await alice.post('edit_message', { message_id: sent.id, content: 'one, edited' })
    await guest.chat.ok('toggle_message_reaction', { message_id: sent.id, emoji: '👍' })
    await alice.post('send_message', { chat_id: guest.chatId, content: 'two' })
    await alice.post('soft_delete_message', { message_id: sent.id })
    const again = openGuestEvents(t, world, `${guest.query}&since=${seen}`)
    await again.until(() => again.events.some((event) => event.type === 'MessageDeleted'), 'the replayed delete')

    const types = again.events.map((event) => event.type)
    assert.deepEqual(
      types.filter((type) => type !== 'MessageRead'),
      ['MessageEdited', 'ReactionChanged', 'NewChatMessage', 'MessageDeleted'],
      JSON.stringify(types),
    )
    assert.ok(
      again.events.every((event) => event.tick > seen),
      'nothing the first stream had is sent again',
    )
    assert.deepEqual(again.contents(), ['two'])
  },
)

forEachDialect('a guest cannot follow another invite, another device or a member', async (t, dialect) => {
  const world = await guestWorld(t, dialect)
  const [alice, bob] = [await world.signedIn(), await world.signedIn()]
  const guest = await invitedGuest(world, alice)
  const other = await invitedGuest(world, bob, OTHER_DEVICE)
  const url = (query: string) => `${world.gateway.url}/auth/v1/subscribe${query}`
  const refusals = [
    ['a forged code', `?code=Forged${guest.code.slice(6)}&device_guid=${DEVICE}`],
    ['the other invite’s code on this device', `?code=${other.code}&device_guid=${DEVICE}`],
    ['this code on a device that never joined it', `?code=${guest.code}&device_guid=${OTHER_DEVICE}`],
  ]
  for (const [what, query] of refusals) {
    const response = await fetch(url(query!))
    assert.equal(response.status, 404, what)
    assert.equal((await json(response)).error.code, 3008, what)
  }
  const half = await fetch(url(`?code=${guest.code}`))
  assert.equal(half.status, 401, 'a code without its device is no credential')
  const signedInAsGuest = await fetch(url(guest.query), { headers: { cookie: alice.cookie } })
  assert.equal(signedInAsGuest.status, 400, 'a session does not take guest credentials')

  // Subjects are never the client's to name.
  const named = await fetch(url(`${guest.query}&subjects=user:${alice.crmId},code:${other.member}`))
  assert.equal(named.status, 400, 'a stream with client-named subjects is refused')

  // The stream has the guest's own subject only.
  const stream = openGuestEvents(t, world, guest.query)
  await stream.opened()
  const aliceChat = (await alice.post('create_chat', { type: 2, name: 'Private to Alice', members: [] })).chat.id
  await alice.post('send_message', { chat_id: aliceChat, content: 'for Alice only' })
  await bob.post('send_message', { chat_id: other.chatId, content: 'for the other guest' })
  await other.chat.ok('send_message', { chat_id: other.chatId, content: 'from the other guest' })
  // The guest's own message is the barrier: whatever else reached this stream came before it.
  await alice.post('send_message', { chat_id: guest.chatId, content: 'for this guest' })
  await stream.until(() => stream.contents().includes('for this guest'), 'the guest’s own message')
  assert.deepEqual(stream.contents(), ['for this guest'])
  assert.ok(
    stream.events.every((event) => event.data.chat_id === guest.chatId),
    JSON.stringify(stream.events),
  )
})

forEachDialect('a revoked invite closes the guest’s stream and refuses its reconnect', async (t, dialect) => {
  const world = await guestWorld(t, dialect)
  const alice = await world.signedIn()
  const guest = await invitedGuest(world, alice)
  const controller = new AbortController()
  t.after(() => controller.abort())
  const response = await fetch(`${world.gateway.url}/auth/v1/subscribe${guest.query}`, { signal: controller.signal })
  assert.equal(response.status, 200)
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  while (!text.includes(': subscribed')) text += (await reader.read()).value ?? ''

  await alice.post('send_message', { chat_id: guest.chatId, content: 'before the revocation' })
  while (!text.includes('before the revocation')) text += (await reader.read()).value ?? ''
  await alice.post('revoke_invite', { code: guest.code })
  await alice.post('send_message', { chat_id: guest.chatId, content: 'after the revocation' })
  const deadline = setTimeout(() => controller.abort(), 10_000)
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    text += value
  }
  clearTimeout(deadline)
  assert.ok(!controller.signal.aborted, 'the gateway ended the stream within a few invite checks')
  assert.ok(!text.includes('after the revocation'), text)

  const again = await fetch(`${world.gateway.url}/auth/v1/subscribe${guest.query}`)
  assert.equal(again.status, 404)
  assert.equal((await json(again)).error.code, 3008)
})
