import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, RouteFlags, signedHeaders } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import {
  PEER_CREDENTIALS,
  providerSignatures,
  smsSettingsFor,
  startSmsProviderPeer,
} from '../../../chat/test/sms-provider-peer.ts'
import { startChat } from '../../../chat/test/support.ts'
import { sessionCookieOf } from '../../test/sign-in.ts'
import { SERVICE_SECRET, startGateway } from '../../test/support.ts'

// The address people and providers use; a TLS terminator in front of the gateway forwards it.
const PUBLIC_ORIGIN = 'https://atrium.example'
const PHONE = '+4915112345678'

/** A Twilio-speaking peer, the chat module sending through it, and a gateway in front (closed after the test). */
async function startSmsSystem(t: TestContext, dialect: DatabaseDialect) {
  // Registered first, so the gateway closes before the chat module it calls.
  let closeGateway = async () => {}
  t.after(() => closeGateway())
  const twilio = await startSmsProviderPeer(t, 'twilio', PEER_CREDENTIALS.twilio)
  const chat = await startChat(t, dialect, {
    ServiceSecret: SERVICE_SECRET,
    ...smsSettingsFor('twilio', twilio, { CallbackBaseUrl: PUBLIC_ORIGIN }),
  })
  const gateway = await startGateway(t, dialect, { settings: { Modules: { chat: chat.base } } })
  closeGateway = () => gateway.app.close()
  return { twilio, chat, gateway }
}

forEachDialect(
  'phone sign-in end to end: the code goes out by Twilio, the person signs in, and Twilio’s signed status callback reaches the chat module through the gateway',
  async (t, dialect) => {
    const { twilio, chat, gateway } = await startSmsSystem(t, dialect)
    // Status callbacks come from the provider, without a session.
    await gateway.store.routes.add({ prefix: '/sms/', upstream: 'chat', flags: 0 })
    await gateway.store.routes.refresh()
    const post = (path: string, body: object) =>
      fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })

    const start = await post('/auth/v1/phone/start', { phone: '+49 151 12345678', returnTo: '/chat/' })
    assert.equal(start.status, 200, JSON.stringify(await start.clone().json()))
    const sent = twilio.only()
    assert.ok(sent.authorized)
    assert.equal(sent.fields.To, PHONE)
    const code = /^Your sign-in code is (\d{6})$/.exec(String(sent.fields.Body))?.[1]
    assert.ok(code, `no code in ${sent.fields.Body}`)

    const verify = await post('/auth/v1/phone/verify', { challengeId: (await json(start)).result.challengeId, code })
    const verified = await json(verify)
    assert.equal(verify.status, 200, JSON.stringify(verified))
    assert.ok(sessionCookieOf(verify, gateway.config.Sessions.CookieName), 'signed in with a session')
    assert.deepEqual(verified.result.user.contacts, [
      { kind: 'phone', value: PHONE, verified: true, manuallyAdded: false },
    ])

    // Twilio reports delivery to the StatusCallback it was given, signed over that public URL.
    const callbackUrl = String(sent.fields.StatusCallback)
    assert.equal(callbackUrl, `${PUBLIC_ORIGIN}/sms/v1/status/twilio`)
    const form = new URLSearchParams({ MessageSid: sent.messageId, MessageStatus: 'delivered', To: PHONE })
    const signature = providerSignatures.twilio(PEER_CREDENTIALS.twilio.authToken, callbackUrl, form)
    const path = new URL(callbackUrl).pathname
    // One character changed; the signature may itself begin with x (one time in 64).
    const forgedSignature = `${signature.startsWith('x') ? 'y' : 'x'}${signature.slice(1)}`
    const forged = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': forgedSignature },
      body: form.toString(),
    })
    assert.equal(forged.status, 403)
    assert.equal((await json(forged)).error.code, 3042)

    const callback = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
      body: form.toString(),
    })
    assert.equal(callback.status, 200, JSON.stringify(await callback.clone().json()))
    const statusPath = `/private/v1/SmsStatus?provider=twilio&message_id=${sent.messageId}`
    const status = await json(
      await fetch(`${chat.base}${statusPath}`, { headers: signedHeaders(SERVICE_SECRET, 'GET', statusPath) }),
    )
    assert.equal(status.result?.status, 'delivered', JSON.stringify(status))
  },
)

forEachDialect('the status callback route is reachable only where the route map opens /sms/', async (t, dialect) => {
  const { chat, gateway } = await startSmsSystem(t, dialect)
  await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
  await gateway.store.routes.refresh()

  const unrouted = await fetch(`${gateway.url}/sms/v1/status/twilio`, { method: 'POST', body: 'MessageSid=x' })
  assert.equal(unrouted.status, 404)
  const direct = await fetch(`${chat.base}/sms/v1/status/twilio`, { method: 'POST', body: 'MessageSid=x' })
  assert.equal(direct.status, 401, 'the module itself answers only the gateway')
})
