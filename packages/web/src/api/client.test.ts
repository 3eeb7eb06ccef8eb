import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { test } from 'node:test'
import { startSignInWorld } from '../../../gateway/test/sign-in.ts'
import { createAuthApi } from './auth-api.ts'
import { createChatApi } from './chat-api.ts'
import { createApiClient } from './client.ts'
import { isFailure } from './envelope.ts'

/** fetch with a cookie jar of one site, as a browser tab keeps it (Node's fetch keeps no cookies). */
function browserFetch(): typeof fetch {
  const jar = new Map<string, string>()
  return async (input, init = {}) => {
    const headers = new Headers(init.headers)
    if (jar.size > 0) headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '))
    const response = await fetch(input, { ...init, headers })
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';')
      const [name = '', value = ''] = pair.split('=')
      if (value === '' || attributes.some((attribute) => attribute.trim() === 'Max-Age=0')) jar.delete(name)
      else jar.set(name, value)
    }
    return response
  }
}

const ROUTES = [{ Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] }]
const INFO = { screen: '1280x720', timezone: 'Europe/Berlin', language: 'de-DE' }

async function signedInClient(t: TestContext) {
  const world = await startSignInWorld(t, 'sqlite', { settings: { Proxy: { Routes: ROUTES } } })
  /** Signs in through a client whose requests go through `wrap` (a network that loses answers, say). */
  async function signIn(email: string, deviceGuid: string, wrap = (send: typeof fetch) => send) {
    const client = createApiClient({ base: world.url, deviceGuid, fetch: wrap(browserFetch()) })
    const auth = createAuthApi(client)
    const { challengeId } = await auth.startEmail(email, '/chat/c/7', { ...INFO, deviceGuid })
    const signedIn = await auth.verifyEmail(challengeId, world.mailTo(email).code, { ...INFO, deviceGuid })
    // Registered in the chat module (the profile sync) before another person names them in a chat.
    await world.app.syncProfiles()
    return { client, auth, chat: createChatApi(client), signedIn }
  }
  return { world, signIn }
}

test('an email sign-in through the client records the audit fields and the device', async (t) => {
  const { world, signIn } = await signedInClient(t)
  const { signedIn, auth } = await signIn('alice@example.com', 'device-guid-alice-01')
  assert.equal(signedIn.returnTo, '/chat/c/7')
  assert.deepEqual(
    signedIn.user.contacts.map((contact) => contact.value),
    ['alice@example.com'],
  )

  const rows = await world.store.db
    .selectFrom('login_audit')
    .selectAll()
    .where('crm_id', '=', Number(signedIn.user.crmId))
    .execute()
  const verified = rows.find((row) => row.method === 'email_otp' && row.success)
  assert.ok(verified, JSON.stringify(rows))
  assert.equal(verified.screen, '1280x720')
  assert.equal(verified.device_guid, 'device-guid-alice-01')
  assert.equal(verified.timezone, 'Europe/Berlin')
  assert.equal(verified.language, 'de-DE')

  const session = await auth.session()
  assert.equal(session?.crmId, signedIn.user.crmId)
  await auth.logout()
  assert.equal(await auth.session(), undefined)
})

test('chat calls through the gateway carry the CSRF token; a stale token is re-read once', async (t) => {
  const { signIn } = await signedInClient(t)
  const alice = await signIn('alice@example.com', 'device-guid-alice-01')
  const bob = await signIn('bob@example.com', 'device-guid-bob-0001')

  const { chat } = await alice.chat.createPrivateChat(bob.signedIn.user.crmId)
  const sent = await alice.chat.sendMessage(chat.id, 'Hello Bob')
  assert.equal(sent.content, 'Hello Bob')
  const [bobsChat] = await bob.chat.getChats()
  assert.equal(bobsChat?.id, chat.id)
  assert.equal(bobsChat?.unread, 1)

  // The page holds a token of an older session (another tab signed in again): one retry fixes it.
  bob.client.setCsrf('stale-token-of-an-old-session')
  const read = await bob.chat.markRead(chat.id)
  assert.equal(read.unread, 0)

  // Without a session the token cannot be renewed, and the refusal reaches the caller.
  await bob.auth.logout()
  bob.client.setCsrf('stale-token-of-an-old-session')
  await assert.rejects(bob.chat.sendMessage(chat.id, 'after sign-out'), (error) =>
    isFailure(error, 'CsrfRejected', 'SessionRequired', 'Unauthenticated'),
  )
})

test('a message whose answer was lost is sent again with its key and stored once', async (t) => {
  const { signIn } = await signedInClient(t)
  // Alice's network loses the answers of her first two sends: each reached the gateway and the chat
  // module stored it, but the connection dropped on the way back.
  const keys: string[] = []
  let lose = 2
  const lossy =
    (send: typeof fetch): typeof fetch =>
    async (input, init = {}) => {
      const response = await send(input, init)
      if (String(input).endsWith('/send_message')) {
        keys.push(new Headers(init.headers).get('idempotency-key') ?? '')
        if (lose-- > 0) throw new TypeError('fetch failed')
      }
      return response
    }
  const alice = await signIn('alice@example.com', 'device-guid-alice-01', lossy)
  const bob = await signIn('bob@example.com', 'device-guid-bob-0001')
  const { chat } = await alice.chat.createPrivateChat(bob.signedIn.user.crmId)
  const sent = await alice.chat.sendMessage(chat.id, 'Sent once')
  assert.equal(sent.content, 'Sent once')
  assert.equal(keys.length, 3, 'sent three times')
  assert.ok(keys[0] && keys.every((key) => key === keys[0]), 'with one key')
  const { messages } = await bob.chat.getChatMessages(chat.id)
  assert.deepEqual(
    messages.map((message) => [message.id, message.content]),
    [[sent.id, 'Sent once']],
  )
})

test('a failure of the chat module arrives as its code', async (t) => {
  const { signIn } = await signedInClient(t)
  const alice = await signIn('alice@example.com', 'device-guid-alice-01')
  await assert.rejects(alice.chat.getChatInfo('890844816171008'), (error) => isFailure(error, 'ChatNotFound'))
  await assert.rejects(alice.chat.createPrivateChat(alice.signedIn.user.crmId), (error) =>
    isFailure(error, 'InvalidRequest'),
  )
})
