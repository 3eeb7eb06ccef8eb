import assert from 'node:assert/strict'
import test, { type TestContext } from 'node:test'
import { createTestDatabaseUrl, listen } from '@atrium/platform/testing'
import type { FastifyBaseLogger } from 'fastify'
import { type MailApiName, startMailApiPeer } from '../../test/mail-api-peer.ts'
import { closedPort } from '../../test/smtp-peer.ts'
import { createChatClient, SERVICE_SECRET } from '../../test/support.ts'
import { buildChat } from '../app.ts'
import { loadChatConfig } from '../config.ts'
import { createApiMailer } from './mail-api.ts'
import { otpMail, passwordResetMail } from './templates.ts'

const KEY = 'mail-api-key-7c1e9d0b4a'
const FROM_NAME = 'Atrium Test'
const FROM_ADDRESS = 'no-reply@atrium.test'
const FROM = `${FROM_NAME} <${FROM_ADDRESS}>`
const CODE = '582017'
const APIS: MailApiName[] = ['postmark', 'sendgrid']

/** A chat module sending mail through `api` at a local peer, logging everything into `logs`. */
async function startWithApi(
  t: TestContext,
  api: MailApiName,
  { key = KEY, inactive = [] as string[], timeoutMs = 10_000, baseUrl = '' } = {},
) {
  const peer = await startMailApiPeer(t, api, KEY, inactive)
  const logs: string[] = []
  const config = loadChatConfig(
    {
      ChatDB: await createTestDatabaseUrl(t, 'sqlite'),
      ServiceSecret: SERVICE_SECRET,
      SmtpSettings: { From: FROM },
      MailTransport: api,
      MailApi: { Key: key, BaseUrl: baseUrl || peer.url, TimeoutMs: timeoutMs },
    },
    {},
  )
  const app = await buildChat(config, { logger: { level: 'debug', stream: { write: (line) => logs.push(line) } } })
  const chat = createChatClient(await listen(t, app))
  const send = (operation: string, body: object) => chat.call('POST', `/private/v1/${operation}`, {}, body)
  const failures = () => logs.filter((line) => line.includes('delivery failed'))
  return { peer, logs, send, failures }
}

function assertNoSecrets(text: string) {
  for (const secret of [KEY, CODE]) assert.ok(!text.includes(secret), `leaked ${secret}: ${text}`)
}

for (const api of APIS) {
  test(`${api}: SendEmailOTP sends the template's text and HTML, with the magic link, authenticated by the key`, async (t) => {
    const { peer, send } = await startWithApi(t, api)
    const link = 'https://example.com/auth/v1/magic?token=abc&x=1'

    const response = await send('SendEmailOTP', { email: 'alice@example.com', code: CODE, link, valid_minutes: 10 })

    assert.equal(response.status, 200, JSON.stringify(response.error))
    assert.deepEqual(response.result, { channel: 'email', to: 'a***@example.com' })
    assert.equal(peer.accepted.length, 1)
    const [mail] = peer.accepted as [(typeof peer.accepted)[0]]
    const expected = otpMail(CODE, 'sign-in', { link, validMinutes: 10 })
    assert.deepEqual(mail.to, ['alice@example.com'])
    assert.equal(mail.from, FROM)
    assert.equal(mail.subject, expected.subject)
    assert.equal(mail.text, expected.text)
    assert.equal(mail.html, expected.html)
    assert.ok(mail.text.includes(CODE) && mail.text.includes(link))
    assert.ok(mail.html?.includes(`>${CODE}<`) && mail.html.includes('token=abc&amp;x=1'))
    if (api === 'postmark') {
      assert.equal(mail.headers['x-postmark-server-token'], KEY)
      assert.deepEqual(Object.keys(mail.body).sort(), ['From', 'HtmlBody', 'Subject', 'TextBody', 'To'])
    } else {
      assert.equal(mail.headers.authorization, `Bearer ${KEY}`)
      assert.deepEqual(mail.body.from, { email: FROM_ADDRESS, name: FROM_NAME })
      assert.deepEqual(
        (mail.body.content as { type: string }[]).map(({ type }) => type),
        ['text/plain', 'text/html'],
      )
    }
    assert.equal(mail.headers.accept, 'application/json')
  })

  test(`${api}: SendEmailPassReset and SendEmail reach every recipient with the provider's message id`, async (t) => {
    const { peer, send } = await startWithApi(t, api)
    const resetUrl = 'https://example.com/reset?token=r1'

    const reset = await send('SendEmailPassReset', { email: 'bob@example.com', reset_url: resetUrl })
    const plain = await send('SendEmail', {
      to: ['carol@example.com', 'dave@example.com'],
      subject: 'Weekly digest',
      text: 'Three new messages.',
      html: '<p>Three <b>new</b> messages.</p>',
    })
    const textOnly = await send('SendEmail', { to: 'erin@example.com', subject: 'Plain', text: 'Only text.' })

    for (const answer of [reset, plain, textOnly]) assert.equal(answer.status, 200, JSON.stringify(answer.error))
    const [toBob, toTwo, toErin] = peer.accepted as [
      (typeof peer.accepted)[0],
      (typeof peer.accepted)[0],
      (typeof peer.accepted)[0],
    ]
    assert.equal(peer.accepted.length, 3)
    const expected = passwordResetMail(resetUrl)
    assert.deepEqual(
      { to: toBob.to, subject: toBob.subject, text: toBob.text, html: toBob.html },
      { to: ['bob@example.com'], ...expected },
    )
    assert.deepEqual(reset.result, { to: 'b***@example.com', message_id: toBob.messageId })
    assert.deepEqual(toTwo.to, ['carol@example.com', 'dave@example.com'])
    assert.equal(toTwo.text, 'Three new messages.')
    assert.equal(toTwo.html, '<p>Three <b>new</b> messages.</p>')
    assert.deepEqual(plain.result, { message_id: toTwo.messageId })
    assert.equal(toErin.html, undefined, 'no HTML part is invented for a text-only message')
    assert.equal(toErin.text, 'Only text.')
  })

  test(`${api}: a key the provider refuses answers DeliveryFailed; the reason is logged, the key never`, async (t) => {
    const { peer, logs, send, failures } = await startWithApi(t, api, { key: 'a-revoked-key-0000' })

    const response = await send('SendEmailOTP', { email: 'alice@example.com', code: CODE })

    assert.equal(response.status, 502)
    assert.equal(response.error?.code, 3010)
    assert.equal(response.error?.message, 'The email delivery failed; try again later.')
    assert.deepEqual(
      peer.requests.map(({ status }) => status),
      [401],
    )
    const [failure] = failures()
    assert.match(failure ?? logs.join(''), api === 'postmark' ? /valid Server token/ : /authorization grant is invalid/)
    assert.match(failure!, /"responseCode":401/)
    assert.ok(!(logs.join('') + JSON.stringify(response)).includes('a-revoked-key-0000'))
    assertNoSecrets(logs.join('') + JSON.stringify(response))
  })

  test(`${api}: an inactive recipient is refused with the provider's reason in the log`, async (t) => {
    const { peer, send, failures } = await startWithApi(t, api, { inactive: ['bounced@example.com'] })

    const response = await send('SendEmailOTP', { email: 'bounced@example.com', code: CODE })

    assert.equal(response.status, 502)
    assert.equal(response.error?.code, 3010)
    assert.equal(peer.accepted.length, 0)
    const [failure] = failures()
    if (api === 'postmark') {
      assert.deepEqual(
        peer.requests.map(({ status }) => status),
        [422],
      )
      assert.match(failure!, /marked as inactive/)
      assert.match(failure!, /"code":"postmark-406"/)
    } else {
      assert.deepEqual(
        peer.requests.map(({ status }) => status),
        [400],
      )
      assert.match(failure!, /personalizations: Does not contain a valid address/)
    }
    assertNoSecrets(failures().join(''))
  })

  test(`${api}: a server error at the provider answers DeliveryFailed`, async (t) => {
    const { peer, send, failures } = await startWithApi(t, api)
    peer.setMode('server-error')

    const response = await send('SendEmail', { to: 'alice@example.com', subject: 'Hello', text: 'Hi' })

    assert.equal(response.status, 502)
    assert.equal(response.error?.code, 3010)
    assert.deepEqual(
      peer.requests.map(({ status }) => status),
      [500],
    )
    assert.match(failures()[0]!, /"responseCode":500/)
  })

  test(`${api}: a provider that never answers is given up after MailApi.TimeoutMs`, async (t) => {
    const { peer, send, failures } = await startWithApi(t, api, { timeoutMs: 300 })
    peer.setMode('hang')

    const started = Date.now()
    const response = await send('SendEmailOTP', { email: 'alice@example.com', code: CODE })
    const elapsed = Date.now() - started

    assert.equal(response.status, 502)
    assert.equal(response.error?.code, 3010)
    assert.equal(peer.requests.length, 1, 'the request reached the provider')
    assert.ok(elapsed >= 250 && elapsed < 5_000, `answered after ${elapsed} ms`)
    assert.match(failures()[0]!, /did not answer within 300 ms/)
  })

  test(`${api}: a provider that cannot be reached answers DeliveryFailed, the cause in the log`, async (t) => {
    const { send, failures } = await startWithApi(t, api, { baseUrl: `http://127.0.0.1:${await closedPort()}` })

    const response = await send('SendEmailOTP', { email: 'alice@example.com', code: CODE })

    assert.equal(response.status, 502)
    assert.equal(response.error?.code, 3010)
    assert.doesNotMatch(JSON.stringify(response), /127\.0\.0\.1|ECONNREFUSED/)
    assert.match(failures()[0]!, /could not be reached/)
    assert.match(failures()[0]!, /"code":"ECONNREFUSED"/)
    assertNoSecrets(failures().join(''))
  })

  test(`${api}: an oversized body is refused before the provider, and the provider's 413 is DeliveryFailed`, async (t) => {
    const { peer, send, failures } = await startWithApi(t, api)

    const tooLarge = await send('SendEmail', { to: 'alice@example.com', subject: 'Big', text: 'x'.repeat(101 * 1024) })
    assert.equal(tooLarge.status, 400)
    assert.equal(peer.requests.length, 0, 'nothing was sent')

    // Within our limits, but larger than the peer takes.
    const big = 'y'.repeat(90 * 1024)
    const refused = await send('SendEmail', { to: 'alice@example.com', subject: 'Big', text: big, html: big })
    assert.equal(refused.status, 502)
    assert.equal(refused.error?.code, 3010)
    assert.deepEqual(
      peer.requests.map(({ status }) => status),
      [413],
    )
    assert.match(failures()[0]!, /"responseCode":413/)
  })
}

test('SendGrid gets each recipient once, as its API requires', async (t) => {
  const { peer, send } = await startWithApi(t, 'sendgrid')

  const response = await send('SendEmail', {
    to: ['carol@example.com', 'Carol@example.com', 'dave@example.com'],
    subject: 'Once',
    text: 'Once each.',
  })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.deepEqual(peer.accepted[0]?.to, ['carol@example.com', 'dave@example.com'])
})

for (const api of APIS) {
  test(`${api}: an email reply keeps its sender, Reply-To and threading headers`, async (t) => {
    const peer = await startMailApiPeer(t, api, KEY, [])
    const quiet = { info() {}, warn() {}, error() {}, debug() {} } as unknown as FastifyBaseLogger
    const mailer = createApiMailer({
      provider: api,
      api: { Key: KEY, BaseUrl: peer.url, TimeoutMs: 10_000 },
      from: FROM,
      log: quiet,
    })
    const reply = {
      to: ['carol@example.com'],
      subject: 'Re: The "launch" plan',
      text: 'Thanks, noted.',
      from: { name: 'Team "Atrium"', address: 'abc123@atrium.test' },
      replyTo: 'abc123@atrium.test',
      messageId: '<r1.42@atrium.test>',
      inReplyTo: '<m1@example.com>',
      references: '<m0@example.com> <m1@example.com>',
      headers: { 'X-Loop': 'atrium.test' },
    }

    await mailer.send(reply)

    const [mail] = peer.accepted
    assert.ok(mail)
    assert.equal(
      mail.from,
      api === 'postmark' ? '"Team \\"Atrium\\"" <abc123@atrium.test>' : 'Team "Atrium" <abc123@atrium.test>',
    )
    assert.equal(mail.replyTo, reply.replyTo)
    assert.deepEqual(mail.mailHeaders, {
      'Message-ID': reply.messageId,
      'In-Reply-To': reply.inReplyTo,
      References: reply.references,
      'X-Loop': 'atrium.test',
    })
  })
}

test('MailTransport settings are checked at boot: a key for an API, https: for a remote base URL, a host for SMTP', () => {
  const load = (settings: object) => () => loadChatConfig({ ServiceSecret: SERVICE_SECRET, ...settings }, {})

  assert.throws(load({ MailTransport: 'postmark' }), /MailApi\.Key: required with MailTransport postmark/)
  assert.throws(load({ MailTransport: 'sendgrid' }), /MailApi\.Key: required with MailTransport sendgrid/)
  assert.throws(load({ MailTransport: 'smtp' }), /SmtpSettings\.Host: required with MailTransport smtp/)
  assert.throws(load({ MailTransport: 'mailgun' }), /MailTransport/)
  assert.throws(load({ MailTransport: 'postmark', MailApi: { Key: 'token\r\nX-Other: 1' } }), /MailApi\.Key/)
  for (const BaseUrl of ['http://api.example.com', 'https://u:p@api.example.com', 'ftp://127.0.0.1', 'not a url'])
    assert.throws(load({ MailTransport: 'sendgrid', MailApi: { Key: 'k', BaseUrl } }), /MailApi\.BaseUrl/, BaseUrl)
  for (const BaseUrl of ['https://api.eu.sendgrid.com', 'http://127.0.0.1:8025', 'http://localhost:1'])
    assert.doesNotThrow(load({ MailTransport: 'sendgrid', MailApi: { Key: 'k', BaseUrl } }), BaseUrl)
})
