import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { forEachDialect } from '@atrium/platform/testing'
import {
  PEER_CREDENTIALS,
  type PeerProvider,
  smsSettingsFor,
  startSmsProviderPeer,
} from '../../../test/sms-provider-peer.ts'
import { startChat } from '../../../test/support.ts'

const TO = '+4915112345678'
// Outside the GSM alphabet (ü is in it; ß, — and the emoji are not all): tests the encoding.
// The country code and the last three digits stay; the rest is starred.
const MASKED = `${TO.slice(0, 3)}${'*'.repeat(TO.length - 6)}${TO.slice(-3)}`
const TEXT = 'Grüße — your code is 482913 👋'

/** What each provider's documented API must receive for TO and TEXT, by field. */
function expectedFields(provider: PeerProvider): Record<string, unknown> {
  const { accountId, authToken, from } = PEER_CREDENTIALS[provider]
  switch (provider) {
    case 'twilio':
      return { To: TO, From: from, Body: TEXT }
    case 'vonage':
      return { api_key: accountId, api_secret: authToken, from, to: TO.slice(1), text: TEXT, type: 'unicode' }
    case 'plivo':
      return { src: from, dst: TO, text: TEXT }
    case 'sinch':
      return { from, to: [TO], body: TEXT }
    case 'telnyx':
      return { from, to: TO, text: TEXT }
  }
}

for (const provider of ['twilio', 'vonage', 'plivo', 'sinch', 'telnyx'] as const) {
  forEachDialect(`SendSMS sends through ${provider}'s documented API with its authentication`, async (t, dialect) => {
    const peer = await startSmsProviderPeer(t, provider, PEER_CREDENTIALS[provider])
    const chat = await startChat(t, dialect, smsSettingsFor(provider, peer))

    const response = await chat.call('POST', '/private/v1/SendSMS', {}, { to: TO, text: TEXT, crm_id: '42' })

    assert.equal(response.status, 200, JSON.stringify(response.error))
    const request = peer.only()
    assert.ok(request.authorized, `${provider} authentication: ${JSON.stringify(request.headers.authorization)}`)
    const expected = expectedFields(provider)
    for (const [field, value] of Object.entries(expected))
      assert.deepEqual(request.fields[field], value, `${provider} field ${field}`)
    assert.ok(!('StatusCallback' in request.fields || 'callback' in request.fields || 'url' in request.fields))
    assert.deepEqual(response.result, { provider, message_id: request.messageId, to: MASKED })

    const status = await chat.call('GET', '/private/v1/SmsStatus', {}, { provider, message_id: request.messageId })
    assert.equal(status.status, 200, JSON.stringify(status.error))
    assert.equal(status.result.status, 'queued')
    assert.equal(status.result.to, MASKED)
  })
}

forEachDialect('SendSMS refuses bad input before any provider is asked', async (t, dialect) => {
  const peer = await startSmsProviderPeer(t, 'twilio', PEER_CREDENTIALS.twilio)
  const chat = await startChat(t, dialect, smsSettingsFor('twilio', peer))
  const cases: [string, object, number][] = [
    ['not E.164', { to: '015112345678', text: 'hi' }, 1000],
    ['letters in the number', { to: '+49151abc', text: 'hi' }, 1000],
    ['empty text', { to: TO, text: '' }, 1000],
    ['text over 1600 characters', { to: TO, text: 'x'.repeat(1601) }, 1000],
    ['NUL in the text', { to: TO, text: 'code\u0000 123' }, 1000],
    ['an unknown field', { to: TO, text: 'hi', from: '+1555' }, 1000],
    ['a body over the size limit', { to: TO, text: 'x'.repeat(1024 * 1024 + 1) }, 1002],
  ]
  for (const [what, body, code] of cases) {
    const response = await chat.call('POST', '/private/v1/SendSMS', {}, body)
    assert.equal(response.error?.code, code, `${what}: ${JSON.stringify(response.error)}`)
  }
  assert.equal(peer.received.length, 0, 'nothing reached the provider')
})

forEachDialect('a provider refusing the number answers SmsRecipientRefused with its reason', async (t, dialect) => {
  const peer = await startSmsProviderPeer(t, 'twilio', PEER_CREDENTIALS.twilio)
  const chat = await startChat(t, dialect, smsSettingsFor('twilio', peer))
  peer.answerNext({
    status: 400,
    body: { code: 21610, message: 'Attempt to send to unsubscribed recipient', status: 400 },
  })

  const response = await chat.call('POST', '/private/v1/SendSMS', {}, { to: TO, text: 'hello' })

  assert.equal(response.status, 422)
  assert.equal(response.error?.code, 3040)
  assert.match(response.error?.message ?? '', /twilio.*21610.*unsubscribed/)
})

forEachDialect('wrong credentials answer DeliveryFailed without naming them', async (t, dialect) => {
  for (const provider of ['twilio', 'vonage', 'plivo', 'sinch', 'telnyx'] as const) {
    const peer = await startSmsProviderPeer(t, provider, { ...PEER_CREDENTIALS[provider], authToken: 'the-right-one' })
    const chat = await startChat(t, dialect, smsSettingsFor(provider, peer))

    const response = await chat.call('POST', '/private/v1/SendSMS', {}, { to: TO, text: 'hello' })

    assert.equal(response.status, 502, provider)
    assert.equal(response.error?.code, 3010, provider)
    assert.equal(response.error?.message, 'The SMS delivery failed; try again later.')
    assert.ok(!JSON.stringify(response).includes(PEER_CREDENTIALS[provider].authToken))
    assert.equal(peer.received.length, 1)
  }
})

forEachDialect('in development without SmsSender, SendSMS writes the text into the outbox', async (t, dialect) => {
  const outbox = await mkdtemp(join(tmpdir(), 'atrium-sms-outbox-'))
  t.after(() => rm(outbox, { recursive: true, force: true }))
  const chat = await startChat(t, dialect, { Outbox: { Path: outbox } })

  const response = await chat.call('POST', '/private/v1/SendSMS', {}, { to: TO, text: TEXT })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.deepEqual(response.result, { provider: 'outbox', message_id: '', to: MASKED })
  const [file] = (await readdir(outbox)).filter((name) => name.endsWith('.txt'))
  assert.ok(file, 'a .txt in the outbox')
  assert.equal(await readFile(join(outbox, file), 'utf8'), `Channel: sms\nTo: ${TO}\n\n${TEXT}\n`)
})

forEachDialect('one record per provider message id, held by the database under parallel sends', async (t, dialect) => {
  const peer = await startSmsProviderPeer(t, 'twilio', PEER_CREDENTIALS.twilio)
  const chat = await startChat(t, dialect, smsSettingsFor('twilio', peer))
  // A provider that answers the same message id twice (a deduplicated retry).
  const sid = `SM${'7e'.repeat(16)}`
  const answer = { status: 201, body: { sid, status: 'queued' } }
  peer.answerNext(answer, answer, answer, answer)

  const responses = await Promise.all(
    [1, 2, 3, 4].map(() => chat.call('POST', '/private/v1/SendSMS', {}, { to: TO, text: 'hello' })),
  )

  for (const response of responses)
    assert.deepEqual(response.result, { provider: 'twilio', message_id: sid, to: MASKED })
  assert.equal(peer.received.length, 4)
  const status = await chat.call('GET', '/private/v1/SmsStatus', {}, { provider: 'twilio', message_id: sid })
  assert.equal(status.result.status, 'queued')
})
