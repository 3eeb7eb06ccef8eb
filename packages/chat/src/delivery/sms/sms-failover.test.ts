import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, listen } from '@atrium/platform/testing'
import { PEER_CREDENTIALS, smsSettingsFor, startSmsProviderPeer } from '../../../test/sms-provider-peer.ts'
import { closedPort } from '../../../test/smtp-peer.ts'
import { createChatClient, SERVICE_SECRET } from '../../../test/support.ts'
import { buildChat } from '../../app.ts'
import { loadChatConfig } from '../../config.ts'

const TO = '+4915112345678'
const TIMEOUT_MS = 400

// Like startChat, but logging everything into `logs`, so the tests read what an operator would.
async function startChatWithLogs(t: TestContext, dialect: DatabaseDialect, settings: Record<string, unknown>) {
  const logs: string[] = []
  const config = loadChatConfig(
    { ChatDB: await createTestDatabaseUrl(t, dialect), ServiceSecret: SERVICE_SECRET, ...settings },
    {},
  )
  const app = await buildChat(config, { logger: { level: 'debug', stream: { write: (line) => logs.push(line) } } })
  const chat = createChatClient(await listen(t, app))
  return { logs, send: () => chat.call('POST', '/private/v1/SendSMS', {}, { to: TO, text: 'Your code is 551204' }) }
}

/** Twilio first (at `primaryUrl`), Vonage as the failover, with a short timeout. */
async function startWithFailover(t: TestContext, dialect: DatabaseDialect, primaryUrl: string) {
  const second = await startSmsProviderPeer(t, 'vonage', PEER_CREDENTIALS.vonage)
  const { Sms, SmsSender } = smsSettingsFor('twilio', { url: primaryUrl }, { TimeoutMs: TIMEOUT_MS })
  const vonage = PEER_CREDENTIALS.vonage
  const started = await startChatWithLogs(t, dialect, {
    SmsSender,
    Sms,
    SmsFailover: {
      Sender: 'vonage',
      AccountId: vonage.accountId,
      AuthToken: vonage.authToken,
      From: vonage.from,
      ApiBaseUrl: second.url,
    },
  })
  return { ...started, second }
}

function assertNoSecrets(text: string) {
  for (const secret of [PEER_CREDENTIALS.twilio.authToken, PEER_CREDENTIALS.vonage.authToken, 'Your code is 551204'])
    assert.ok(!text.includes(secret), `leaked ${secret}`)
}

function logLine(logs: string[], message: string, provider: string) {
  return logs.map((line) => JSON.parse(line)).find((entry) => entry.msg === message && entry.provider === provider)
}

forEachDialect(
  'a 5xx from the first provider fails over to the second, and the log says who answered what',
  async (t, dialect) => {
    const first = await startSmsProviderPeer(t, 'twilio', PEER_CREDENTIALS.twilio)
    first.answerNext({ status: 503, body: { code: 20503, message: 'Service unavailable' } })
    const { logs, send, second } = await startWithFailover(t, dialect, first.url)

    const response = await send()

    assert.equal(response.status, 200, JSON.stringify(response.error))
    assert.equal(response.result.provider, 'vonage')
    assert.equal(response.result.message_id, second.only().messageId)
    assert.equal(first.received.length, 1)
    const refused = logLine(logs, 'SMS not accepted by the provider', 'twilio')
    assert.equal(refused?.http_status, 503)
    assert.equal(refused?.kind, 'unavailable')
    assert.equal(logLine(logs, 'SMS accepted by the provider', 'vonage')?.attempt, 2)
    assertNoSecrets(logs.join(''))
  },
)

forEachDialect(
  'a first provider that does not answer is given up after TimeoutMs, then the second sends',
  async (t, dialect) => {
    const first = await startSmsProviderPeer(t, 'twilio', PEER_CREDENTIALS.twilio)
    first.answerNext('hang')
    const { logs, send, second } = await startWithFailover(t, dialect, first.url)

    const started = Date.now()
    const response = await send()
    const elapsed = Date.now() - started

    assert.equal(response.status, 200, JSON.stringify(response.error))
    assert.equal(response.result.provider, 'vonage')
    assert.equal(second.received.length, 1)
    assert.ok(elapsed >= TIMEOUT_MS && elapsed < TIMEOUT_MS + 2000, `took ${elapsed} ms`)
    assert.match(logLine(logs, 'SMS not accepted by the provider', 'twilio')?.reason ?? '', /no answer within 400 ms/)
  },
)

forEachDialect('an unreachable first provider fails over too', async (t, dialect) => {
  const { send, second } = await startWithFailover(t, dialect, `http://127.0.0.1:${await closedPort()}`)
  const response = await send()
  assert.equal(response.result?.provider, 'vonage', JSON.stringify(response.error))
  assert.equal(second.received.length, 1)
})

forEachDialect('a refused number is final: the second provider is not asked', async (t, dialect) => {
  const first = await startSmsProviderPeer(t, 'twilio', PEER_CREDENTIALS.twilio)
  first.answerNext({ status: 400, body: { code: 21211, message: "The 'To' number is not a valid phone number." } })
  const { send, second } = await startWithFailover(t, dialect, first.url)

  const response = await send()

  assert.equal(response.status, 422)
  assert.equal(response.error?.code, 3040)
  assert.equal(second.received.length, 0)
})

forEachDialect('when both providers fail, SendSMS answers DeliveryFailed in bounded time', async (t, dialect) => {
  const first = await startSmsProviderPeer(t, 'twilio', PEER_CREDENTIALS.twilio)
  first.answerNext('hang')
  const { logs, send, second } = await startWithFailover(t, dialect, first.url)
  second.answerNext({
    status: 200,
    body: { 'message-count': '1', messages: [{ status: '5', 'error-text': 'Internal Error' }] },
  })

  const started = Date.now()
  const response = await send()

  assert.ok(Date.now() - started < TIMEOUT_MS * 2 + 2000)
  assert.equal(response.status, 502)
  assert.equal(response.error?.code, 3010)
  assert.equal(logLine(logs, 'SMS not accepted by the provider', 'vonage')?.provider_code, '5')
  assertNoSecrets(logs.join('') + JSON.stringify(response))
})
