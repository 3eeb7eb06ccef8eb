import assert from 'node:assert/strict'
import test, { type TestContext } from 'node:test'
import { createTestDatabaseUrl, listen } from '@atrium/platform/testing'
import { closedPort, startSmtpPeer } from '../../test/smtp-peer.ts'
import { createChatClient, SERVICE_SECRET } from '../../test/support.ts'
import { buildChat } from '../app.ts'
import { loadChatConfig } from '../config.ts'

const PASSWORD = 'p-smtp-password-9f3c'
const CODE = '739204'

// Like startChat, but logging everything at debug level into `logs`, so the tests can read what an operator would.
async function startChatWithLogs(t: TestContext, port: number, password = PASSWORD) {
  const logs: string[] = []
  const config = loadChatConfig(
    {
      ChatDB: await createTestDatabaseUrl(t, 'sqlite'),
      ServiceSecret: SERVICE_SECRET,
      SmtpSettings: { Host: '127.0.0.1', Port: port, Username: 'u', Password: password },
    },
    {},
  )
  const app = await buildChat(config, { logger: { level: 'debug', stream: { write: (line) => logs.push(line) } } })
  const chat = createChatClient(await listen(t, app))
  return {
    logs,
    sendEmailOtp: () => chat.call('POST', '/private/v1/SendEmailOTP', {}, { email: 'leo@example.com', code: CODE }),
  }
}

function assertNoLeak(text: string) {
  for (const secret of [PASSWORD, CODE]) assert.ok(!text.includes(secret), `leaked ${secret}: ${text}`)
}

test('an unreachable SMTP server answers DeliveryFailed without leaking the settings', async (t) => {
  const { logs, sendEmailOtp } = await startChatWithLogs(t, await closedPort())

  const response = await sendEmailOtp()

  assert.equal(response.status, 502)
  assert.equal(response.error?.code, 3010)
  assert.equal(response.error?.message, 'The email delivery failed; try again later.')
  assert.doesNotMatch(JSON.stringify(response), /127\.0\.0\.1|ECONN|\bat .+:\d+:\d+/)
  assertNoLeak(JSON.stringify(response))
  assert.ok(
    logs.some((line) => line.includes('delivery failed') && line.includes('ECONNREFUSED')),
    logs.join(''),
  )
  assertNoLeak(logs.join(''))
})

test('SMTP credentials the server refuses answer DeliveryFailed and never reach the log', async (t) => {
  const peer = await startSmtpPeer(t, { username: 'u', password: 'the-right-one' })
  const { logs, sendEmailOtp } = await startChatWithLogs(t, peer.port)

  const response = await sendEmailOtp()

  assert.equal(response.status, 502)
  assert.equal(response.error?.code, 3010)
  assert.equal(peer.received.length, 0)
  assert.ok(
    logs.some((line) => line.includes('delivery failed') && line.includes('EAUTH')),
    logs.join(''),
  )
  assertNoLeak(JSON.stringify(response) + logs.join(''))
})

test('a sent OTP is logged with the masked recipient only, never the code', async (t) => {
  const peer = await startSmtpPeer(t, { username: 'u', password: PASSWORD })
  const { logs, sendEmailOtp } = await startChatWithLogs(t, peer.port)

  const response = await sendEmailOtp()

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.equal(peer.received.length, 1)
  const sent = logs.find((line) => line.includes('mail sent over SMTP')) ?? assert.fail(logs.join(''))
  assert.match(sent, /"l\*\*\*@example\.com"/)
  assert.ok(!logs.join('').includes('leo@example.com'), logs.join(''))
  assertNoLeak(logs.join(''))
})
