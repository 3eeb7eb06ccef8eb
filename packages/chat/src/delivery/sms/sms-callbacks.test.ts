import assert from 'node:assert/strict'
import { generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, signedHeaders } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import {
  PEER_CREDENTIALS,
  type PeerProvider,
  providerSignatures,
  smsSettingsFor,
  startSmsProviderPeer,
} from '../../../test/sms-provider-peer.ts'
import { SERVICE_SECRET, startChat } from '../../../test/support.ts'

const PUBLIC_ORIGIN = 'https://atrium.example'
const TO = '+4915112345678'
const VONAGE_SECRET = 'vonage-signature-secret-9d8c7b6a'
const SINCH_KEY = 'sinch-callback-key-of-at-least-32-characters'

/** What a test may do to a well-signed callback to see it refused. */
type Variant = 'valid' | 'tampered' | 'unsigned' | 'wrong-key' | 'stale'

interface Sent {
  provider: PeerProvider
  messageId: string
  /** The status callback URL the provider was given, as it received it. */
  callbackUrl: string
  telnyxKeys: { publicKey: KeyObject; privateKey: KeyObject }
  otherKeys: { publicKey: KeyObject; privateKey: KeyObject }
}

function callbackUrlOf(provider: PeerProvider, fields: Record<string, unknown>): string {
  const field = {
    twilio: 'StatusCallback',
    vonage: 'callback',
    plivo: 'url',
    sinch: 'callback_url',
    telnyx: 'webhook_url',
  }
  return String(fields[field[provider]])
}

/** A callback as the provider would send it for `status`, signed with its scheme, then changed by `variant`. */
function providerCallback(sent: Sent, status: string, variant: Variant, nowMs = Date.now()) {
  const { provider, messageId, callbackUrl } = sent
  const { authToken } = PEER_CREDENTIALS[provider]
  const headers: Record<string, string> = {}
  let body = ''
  switch (provider) {
    case 'twilio': {
      const form = new URLSearchParams({ MessageSid: messageId, MessageStatus: status, To: TO, ErrorCode: '' })
      const key = variant === 'wrong-key' ? 'another-auth-token' : authToken
      headers['x-twilio-signature'] = providerSignatures.twilio(key, callbackUrl, form)
      headers['content-type'] = 'application/x-www-form-urlencoded'
      if (variant === 'tampered') form.set('MessageStatus', status === 'delivered' ? 'failed' : 'delivered')
      body = form.toString()
      break
    }
    case 'plivo': {
      const form = new URLSearchParams({ MessageUUID: messageId, Status: status, To: TO.slice(1), ErrorCode: '000' })
      const nonce = randomUUID().replaceAll('-', '')
      const key = variant === 'wrong-key' ? 'another-auth-token' : authToken
      headers['x-plivo-signature-v3'] = providerSignatures.plivo(key, callbackUrl, form, nonce)
      headers['x-plivo-signature-v3-nonce'] = nonce
      headers['content-type'] = 'application/x-www-form-urlencoded'
      if (variant === 'tampered') form.set('Status', status === 'delivered' ? 'failed' : 'delivered')
      body = form.toString()
      break
    }
    case 'vonage': {
      const seconds = Math.floor(nowMs / 1000) - (variant === 'stale' ? 301 : 0)
      const params: Record<string, string> = {
        messageId,
        msisdn: TO.slice(1),
        to: 'Atrium',
        status,
        'err-code': '0',
        'message-timestamp': '2026-11-26 01:00:00',
        timestamp: String(seconds),
        nonce: randomUUID(),
      }
      params.sig = providerSignatures.vonage(
        variant === 'wrong-key' ? 'another-secret' : VONAGE_SECRET,
        'sha256',
        params,
      )
      if (variant === 'tampered') params.status = status === 'delivered' ? 'failed' : 'delivered'
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(params).toString()
      break
    }
    case 'sinch': {
      const url = new URL(callbackUrl)
      const report = {
        type: 'recipient_delivery_report_sms',
        batch_id: messageId,
        recipient: TO,
        code: status === 'Delivered' ? 0 : 401,
        status,
        at: new Date(nowMs).toISOString(),
        client_reference: url.searchParams.get('ref'),
      }
      headers['content-type'] = 'application/json'
      body = JSON.stringify(report)
      // Sinch's report carries no signature: the token in its URL is what is checked.
      if (variant === 'wrong-key' || variant === 'tampered')
        url.searchParams.set('ref', String(Number(url.searchParams.get('ref')) + 1))
      if (variant === 'unsigned') url.searchParams.delete('token')
      return { url: url.href, headers, body }
    }
    case 'telnyx': {
      const seconds = String(Math.floor(nowMs / 1000) - (variant === 'stale' ? 301 : 0))
      const event = {
        data: {
          record_type: 'event',
          event_type: 'message.finalized',
          id: randomUUID(),
          occurred_at: new Date(nowMs).toISOString(),
          payload: { id: messageId, to: [{ phone_number: TO, status }], errors: [] },
        },
        meta: { attempt: 1, delivered_to: callbackUrl },
      }
      body = JSON.stringify(event)
      const keys = variant === 'wrong-key' ? sent.otherKeys : sent.telnyxKeys
      headers['telnyx-timestamp'] = seconds
      headers['telnyx-signature-ed25519'] = sign(null, Buffer.from(`${seconds}|${body}`), keys.privateKey).toString(
        'base64',
      )
      headers['content-type'] = 'application/json'
      if (variant === 'tampered') body = body.replace(`"status":"${status}"`, '"status":"delivery_failed"')
      break
    }
  }
  if (variant === 'unsigned') {
    for (const name of ['x-twilio-signature', 'x-plivo-signature-v3', 'telnyx-signature-ed25519']) delete headers[name]
    if (provider === 'vonage') body = body.replace(/&?sig=[^&]*/, '')
  }
  return { url: callbackUrl, headers, body }
}

/** The provider's status words for a delivered and a sent message. */
const WORDS: Record<PeerProvider, { delivered: string; sent: string }> = {
  twilio: { delivered: 'delivered', sent: 'sent' },
  plivo: { delivered: 'delivered', sent: 'sent' },
  vonage: { delivered: 'delivered', sent: 'accepted' },
  sinch: { delivered: 'Delivered', sent: 'Dispatched' },
  telnyx: { delivered: 'delivered', sent: 'sent' },
}

async function startWithCallbacks(t: TestContext, dialect: DatabaseDialect, provider: PeerProvider) {
  const telnyxKeys = generateKeyPairSync('ed25519')
  const otherKeys = generateKeyPairSync('ed25519')
  const rawPublic = telnyxKeys.publicKey.export({ format: 'jwk' }).x!
  const callbackKey = {
    vonage: VONAGE_SECRET,
    sinch: SINCH_KEY,
    telnyx: Buffer.from(rawPublic, 'base64url').toString('base64'),
  }
  const peer = await startSmsProviderPeer(t, provider, PEER_CREDENTIALS[provider])
  const settings = smsSettingsFor(provider, peer, {
    CallbackBaseUrl: PUBLIC_ORIGIN,
    CallbackKey: callbackKey[provider as keyof typeof callbackKey] ?? '',
    SignatureMethod: 'sha256',
  })
  const chat = await startChat(t, dialect, settings)
  const response = await chat.call('POST', '/private/v1/SendSMS', {}, { to: TO, text: 'Your code is 123456' })
  assert.equal(response.status, 200, JSON.stringify(response.error))
  const request = peer.only()
  const sent: Sent = {
    provider,
    messageId: request.messageId,
    callbackUrl: callbackUrlOf(provider, request.fields),
    telnyxKeys,
    otherKeys,
  }

  /** Posts a callback to the module as the gateway would forward it: the public URL's path and query, signed hop. */
  async function deliver(callback: { url: string; headers: Record<string, string>; body: string }) {
    const { pathname, search } = new URL(callback.url)
    const path = pathname + search
    const response = await fetch(`${chat.base}${path}`, {
      method: 'POST',
      headers: signedHeaders(SERVICE_SECRET, 'POST', path, callback.headers),
      body: callback.body,
    })
    return { status: response.status, body: await json(response) }
  }

  async function status() {
    const answer = await chat.call('GET', '/private/v1/SmsStatus', {}, { provider, message_id: sent.messageId })
    assert.equal(answer.status, 200, JSON.stringify(answer.error))
    return answer.result
  }
  return { sent, deliver, status, chat }
}

for (const provider of ['twilio', 'vonage', 'plivo', 'sinch', 'telnyx'] as const) {
  forEachDialect(
    `${provider} status callbacks: signed ones are stored, others refused with nothing stored`,
    async (t, dialect) => {
      const { sent, deliver, status } = await startWithCallbacks(t, dialect, provider)
      assert.ok(sent.callbackUrl.startsWith(`${PUBLIC_ORIGIN}/sms/v1/status/${provider}`), sent.callbackUrl)

      const variants: Variant[] = ['tampered', 'unsigned', 'wrong-key']
      if (provider === 'vonage' || provider === 'telnyx') variants.push('stale')
      for (const variant of variants) {
        const refused = await deliver(providerCallback(sent, WORDS[provider].delivered, variant))
        assert.equal(refused.status, 403, `${variant}: ${JSON.stringify(refused.body)}`)
        assert.equal(refused.body.error.code, 3042, variant)
        assert.equal((await status()).status, 'queued', `${variant} stored nothing`)
      }

      const delivered = await deliver(providerCallback(sent, WORDS[provider].delivered, 'valid'))
      assert.equal(delivered.status, 200, JSON.stringify(delivered.body))
      assert.deepEqual(delivered.body.result, { updated: 1 })
      const after = await status()
      assert.equal(after.status, 'delivered')
      assert.equal(after.provider_status, WORDS[provider].delivered)

      // A late or replayed earlier status does not move the message backwards.
      const late = await deliver(providerCallback(sent, WORDS[provider].sent, 'valid'))
      assert.equal(late.status, 200)
      assert.deepEqual(late.body.result, { updated: 0 })
      assert.equal((await status()).status, 'delivered')
    },
  )
}

forEachDialect('a callback cannot set the status of a message the provider did not send', async (t, dialect) => {
  const { sent, deliver, status } = await startWithCallbacks(t, dialect, 'twilio')
  const other = { ...sent, messageId: `SM${'0'.repeat(32)}` }
  const answer = await deliver(providerCallback(other, 'delivered', 'valid'))
  assert.equal(answer.status, 200)
  assert.deepEqual(answer.body.result, { updated: 0 })
  assert.equal((await status()).status, 'queued')
})

forEachDialect(
  'a callback signed for another URL is refused (the signature covers the public URL)',
  async (t, dialect) => {
    const { sent, deliver, status } = await startWithCallbacks(t, dialect, 'twilio')
    const signedElsewhere = providerCallback(
      { ...sent, callbackUrl: 'https://elsewhere.example/sms/v1/status/twilio' },
      'delivered',
      'valid',
    )
    const answer = await deliver({ ...signedElsewhere, url: sent.callbackUrl })
    assert.equal(answer.status, 403)
    assert.equal((await status()).status, 'queued')
  },
)

forEachDialect('an oversized callback body is refused before it is read', async (t, dialect) => {
  const { sent, deliver, status } = await startWithCallbacks(t, dialect, 'twilio')
  const callback = providerCallback(sent, 'delivered', 'valid')
  const answer = await deliver({ ...callback, body: `${callback.body}&Pad=${'x'.repeat(70 * 1024)}` })
  assert.equal(answer.status, 413)
  assert.equal(answer.body.error.code, 1002)
  assert.equal((await status()).status, 'queued')
})

forEachDialect('a Vonage receipt by GET, signed with the default md5hash method, is stored', async (t, dialect) => {
  const peer = await startSmsProviderPeer(t, 'vonage', PEER_CREDENTIALS.vonage)
  const chat = await startChat(
    t,
    dialect,
    smsSettingsFor('vonage', peer, { CallbackBaseUrl: PUBLIC_ORIGIN, CallbackKey: VONAGE_SECRET }),
  )
  await chat.call('POST', '/private/v1/SendSMS', {}, { to: TO, text: 'a & b = c' })
  const { messageId, fields } = peer.only()
  const params: Record<string, string> = {
    messageId,
    msisdn: TO.slice(1),
    status: 'delivered',
    'err-code': '0',
    'client-ref': String(fields['client-ref']),
    timestamp: String(Math.floor(Date.now() / 1000)),
  }
  params.sig = providerSignatures.vonage(VONAGE_SECRET, 'md5hash', params)
  const query = new URLSearchParams(params)

  for (const [sig, expected] of [
    ['0'.repeat(32), 403],
    [params.sig, 200],
  ] as const) {
    query.set('sig', sig)
    const path = `${new URL(String(fields.callback)).pathname}?${query}`
    const response = await fetch(`${chat.base}${path}`, { headers: signedHeaders(SERVICE_SECRET, 'GET', path) })
    assert.equal(response.status, expected, sig)
  }
  const status = await chat.call('GET', '/private/v1/SmsStatus', {}, { provider: 'vonage', message_id: messageId })
  assert.equal(status.result.status, 'delivered')
})

forEachDialect(
  'a signed report with NUL or an overlong id is refused before the database sees it',
  async (t, dialect) => {
    const { sent, deliver, status } = await startWithCallbacks(t, dialect, 'twilio')
    const { authToken } = PEER_CREDENTIALS.twilio
    const bad: Record<string, string>[] = [
      { MessageSid: sent.messageId, MessageStatus: 'failed', ErrorCode: '300\u00000' },
      { MessageSid: `${sent.messageId}\u0000`, MessageStatus: 'failed', ErrorCode: '' },
      { MessageSid: 'S'.repeat(101), MessageStatus: 'failed', ErrorCode: '' },
    ]
    for (const fields of bad) {
      const form = new URLSearchParams(fields)
      const answer = await deliver({
        url: sent.callbackUrl,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': providerSignatures.twilio(authToken, sent.callbackUrl, form),
        },
        body: form.toString(),
      })
      assert.equal(answer.status, 400, JSON.stringify(answer.body))
      assert.equal(answer.body.error.code, 1000)
    }
    assert.equal((await status()).status, 'queued')
  },
)
