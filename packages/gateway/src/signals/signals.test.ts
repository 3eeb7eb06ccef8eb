import assert from 'node:assert/strict'
import { forEachDialect, json, until } from '@atrium/platform/testing'
import { openEvents, startEventsWorld } from '../../test/events.ts'
import { TYPING_WINDOW_MS } from './signals.plugin.ts'

interface TypingSignal {
  chat_id: string
  user: string
  expires_ms: number
}

/** An event stream of `user` that also collects the typing frames it receives. */
async function streamOf(t: Parameters<typeof openEvents>[0], base: string, cookie: string) {
  const stream = openEvents(t, base, cookie)
  const typing: TypingSignal[] = []
  stream.source.addEventListener('typing', (message) => typing.push(JSON.parse(message.data)))
  await stream.opened()
  return { ...stream, typing }
}

function caller(base: string, user: { cookie: string; csrf: string }) {
  return {
    typing: (chatId: string) =>
      fetch(`${base}/auth/v1/typing`, {
        method: 'POST',
        headers: { cookie: user.cookie, 'x-csrf-token': user.csrf, 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: chatId }),
      }),
    presence: (chatId: string) =>
      fetch(`${base}/auth/v1/presence?chat_id=${chatId}`, { headers: { cookie: user.cookie } }),
  }
}

forEachDialect(
  'typing reaches the other members’ streams as a frame outside the event sequence',
  async (t, dialect) => {
    const world = await startEventsWorld(t, dialect)
    const base = world.gateway.url
    const [alice, bob, carol] = [await world.signedIn(), await world.signedIn(), await world.signedIn()]
    const group = await alice.post('create_chat', { type: 2, name: 'Team', members: [String(bob.crmId)] })
    const chatId = group.chat.id as string
    const bobs = await streamOf(t, base, bob.cookie)
    const alices = await streamOf(t, base, alice.cookie)
    const carols = await streamOf(t, base, carol.cookie)

    const answer = await caller(base, alice).typing(chatId)
    assert.equal(answer.status, 200)
    assert.deepEqual((await json(answer)).result, { chat_id: chatId, expires_ms: 6000 })
    await bobs.until(() => bobs.typing.length === 1, 'the typing frame')
    assert.deepEqual(bobs.typing, [{ chat_id: chatId, user: String(alice.crmId), expires_ms: 6000 }])
    // A message after it proves the streams are past the signal; the typer and outsiders got none.
    await alice.post('send_message', { chat_id: chatId, content: 'done typing' })
    await bobs.until(() => bobs.contents().includes('done typing'), 'the message')
    await alices.until(() => alices.contents().includes('done typing'), 'the message on the sender’s stream')
    assert.deepEqual(alices.typing, [])
    assert.deepEqual(carols.typing, [])
    // Not an event: no id, so the client's largest tick and a reconnect's replay never see it.
    assert.ok(bobs.ids.every((id) => id !== ''))
    assert.ok(bobs.events.every((event) => event.module === 'chat'))
  },
)

forEachDialect('nobody announces typing into, or reads presence of, a chat they are not in', async (t, dialect) => {
  const world = await startEventsWorld(t, dialect)
  const base = world.gateway.url
  const [alice, bob, mallory] = [await world.signedIn(), await world.signedIn(), await world.signedIn()]
  const { chat } = await alice.post('create_private_chat', { peer: String(bob.crmId) })
  const bobs = await streamOf(t, base, bob.cookie)

  const typing = await caller(base, mallory).typing(chat.id)
  assert.equal(typing.status, 404)
  assert.equal((await json(typing)).error.code, 3000)
  const presence = await caller(base, mallory).presence(chat.id)
  assert.equal(presence.status, 404)
  const refused = await json(presence)
  assert.equal(refused.error.code, 3000)
  assert.equal(refused.result, undefined, 'no members in the refusal')
  const unknown = await caller(base, mallory).typing('123456789')
  assert.equal(unknown.status, 404, 'an unknown chat reads the same as a foreign one')

  // Bob's stream got nothing from Mallory: Alice's signal, sent after, is the first it sees.
  assert.equal((await caller(base, alice).typing(chat.id)).status, 200)
  await bobs.until(() => bobs.typing.length > 0, 'Alice’s typing')
  assert.deepEqual(
    bobs.typing.map((signal) => signal.user),
    [String(alice.crmId)],
  )
  const anonymous = await fetch(`${base}/auth/v1/presence?chat_id=${chat.id}`)
  assert.equal(anonymous.status, 401)
})

forEachDialect('typing is rate-limited per person and chat', async (t, dialect) => {
  const world = await startEventsWorld(t, dialect)
  const base = world.gateway.url
  const [alice, bob] = [await world.signedIn(), await world.signedIn()]
  const { chat } = await alice.post('create_private_chat', { peer: String(bob.crmId) })
  const { chat: other } = await alice.post('create_chat', { type: 2, name: 'Other', members: [String(bob.crmId)] })
  // The window is aligned to the clock: start with most of one left, so all four signals fall in it.
  await until(() => Date.now() % TYPING_WINDOW_MS < TYPING_WINDOW_MS / 3, 'a typing window with 4 s left', 7000)
  for (let signal = 0; signal < 3; signal++) assert.equal((await caller(base, alice).typing(chat.id)).status, 200)
  const again = await caller(base, alice).typing(chat.id)
  assert.equal(again.status, 429)
  assert.equal((await json(again)).error.code, 1011)
  assert.ok(Number(again.headers.get('retry-after')) >= 1)
  assert.equal((await caller(base, alice).typing(other.id)).status, 200, 'another chat has its own allowance')
  assert.equal((await caller(base, bob).typing(chat.id)).status, 200, 'so has another person')
})

forEachDialect('presence says which members have a live stream on this gateway', async (t, dialect) => {
  const world = await startEventsWorld(t, dialect)
  const base = world.gateway.url
  const [alice, bob] = [await world.signedIn(), await world.signedIn()]
  const { chat } = await alice.post('create_private_chat', { peer: String(bob.crmId) })
  const online = async () => {
    const answer = await caller(base, alice).presence(chat.id)
    assert.equal(answer.status, 200)
    const { members } = (await json(answer)).result as { members: { member: string; online: boolean }[] }
    return Object.fromEntries(members.map(({ member, online }) => [member, online]))
  }
  assert.deepEqual(await online(), { [alice.crmId]: false, [bob.crmId]: false })
  const bobs = await streamOf(t, base, bob.cookie)
  assert.deepEqual(await online(), { [alice.crmId]: false, [bob.crmId]: true })
  bobs.close()
  // Within the grace period a closed stream still counts (a reload must not flicker); presence.test.ts
  // shows it ending.
  assert.deepEqual(await online(), { [alice.crmId]: false, [bob.crmId]: true })
})
