import assert from 'node:assert/strict'
import test, { type TestContext } from 'node:test'
import { CommunicationChannel } from '@atrium/platform'
import { json } from '@atrium/platform/testing'
import { addressesOf, startSmtpPeer } from '../../test/smtp-peer.ts'
import { startChat } from '../../test/support.ts'

const SMTP_USER = 'u'
const SMTP_PASSWORD = 'p-smtp-password-9f3c'
const FROM = 'Atrium Test <no-reply@atrium.test>'

async function startWithSmtp(t: TestContext) {
  const peer = await startSmtpPeer(t, { username: SMTP_USER, password: SMTP_PASSWORD })
  const chat = await startChat(t, 'sqlite', {
    SmtpSettings: { Host: '127.0.0.1', Port: peer.port, Username: SMTP_USER, Password: SMTP_PASSWORD, From: FROM },
  })
  const send = (operation: string, body: object) => chat.call('POST', `/private/v1/${operation}`, {}, body)
  return { chat, peer, send }
}

test('SendEmailOTP sends the code over authenticated SMTP, in the text and the HTML', async (t) => {
  const { peer, send } = await startWithSmtp(t)

  const response = await send('SendEmailOTP', { email: 'alice@example.com', code: '482913' })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.deepEqual(response.result, { channel: 'email', to: 'a***@example.com' })
  assert.equal(peer.received.length, 1)
  const [{ envelopeTo, user, mail }] = peer.received as [(typeof peer.received)[0]]
  assert.deepEqual(envelopeTo, ['alice@example.com'])
  assert.equal(user, SMTP_USER)
  assert.deepEqual(addressesOf(mail.to), ['alice@example.com'])
  assert.deepEqual(addressesOf(mail.from), ['no-reply@atrium.test'])
  assert.equal(mail.subject, 'Your sign-in code')
  assert.match(mail.text ?? '', /Your sign-in code is 482913/)
  assert.match(String(mail.html), />482913</)
  assert.doesNotMatch(mail.subject ?? '', /482913/)
})

test('SendEmailOTP with a link and a validity offers both, the link escaped in the HTML', async (t) => {
  const { peer, send } = await startWithSmtp(t)
  const link = 'https://example.com/auth/v1/magic?token=abc&x="<y>'

  const response = await send('SendEmailOTP', { email: 'alice@example.com', code: '482913', link, valid_minutes: 10 })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  const [{ mail }] = peer.received as [(typeof peer.received)[0]]
  assert.match(mail.text ?? '', /It works once, for 10 minutes\./)
  assert.ok((mail.text ?? '').includes(`Or open this link:\n${link}`))
  assert.ok(String(mail.html).includes('href="https://example.com/auth/v1/magic?token=abc&amp;x=&quot;&lt;y&gt;"'))
  for (const bad of ['javascript:alert(1)', 'http://a b', 'ftp://example.com/x']) {
    const refused = await send('SendEmailOTP', { email: 'alice@example.com', code: '482913', link: bad })
    assert.equal(refused.status, 400, bad)
  }
  assert.equal(peer.received.length, 1)
})

test('SendOTP skips an unconfigured Telegram bot and sends by email', async (t) => {
  const { peer, send } = await startWithSmtp(t)

  const response = await send('SendOTP', {
    crm_id: '123456789',
    telegram_chat_id: '987654321',
    email: 'bob@example.com',
    phone: '+491701234567',
    code: 'AB12CD',
    channels: CommunicationChannel.Messenger | CommunicationChannel.Email,
    purpose: 'verify-contact',
  })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.deepEqual(response.result, { channel: 'email', to: 'b***@example.com' })
  assert.deepEqual(peer.received[0]?.envelopeTo, ['bob@example.com'])
  assert.equal(peer.received[0]?.mail.subject, 'Your verification code')
  assert.match(peer.received[0]?.mail.text ?? '', /AB12CD/)
})

test('SendOTP with only SMS allowed and no SMS sender answers NoDeliveryChannel', async (t) => {
  const { peer, send } = await startWithSmtp(t)

  const response = await send('SendOTP', {
    email: 'carol@example.com',
    phone: '+491701234567',
    code: '1234',
    channels: CommunicationChannel.SMS,
  })

  assert.equal(response.status, 422)
  assert.equal(response.error?.code, 3009)
  assert.match(response.error?.message ?? '', /allowed: SMS\)/)
  assert.match(response.error?.message ?? '', /SMS sender \(SmsSender\) is not configured/)
  assert.equal(peer.received.length, 0)
})

test('SendOTP never uses email when the Email flag is cleared', async (t) => {
  const { peer, send } = await startWithSmtp(t)

  const response = await send('SendOTP', {
    email: 'dave@example.com',
    code: '1234',
    channels: CommunicationChannel.Messenger | CommunicationChannel.SMS,
  })

  assert.equal(response.status, 422)
  assert.equal(response.error?.code, 3009)
  assert.match(response.error?.message ?? '', /allowed: Messenger, SMS\)/)
  assert.match(response.error?.message ?? '', /Messenger: no telegram_chat_id given/)
  assert.equal(peer.received.length, 0)
})

test('SendOTP refuses channel flags outside 1..7', async (t) => {
  const { peer, send } = await startWithSmtp(t)

  for (const channels of [0, 8, 15]) {
    const response = await send('SendOTP', { email: 'erin@example.com', code: '1234', channels })
    assert.equal(response.status, 400, `channels ${channels}`)
    assert.equal(response.error?.code, 1000)
    assert.match(response.error?.message ?? '', /channels/)
  }
  assert.equal(peer.received.length, 0)
})

test('SendEmail sends the subject, text and HTML to every recipient', async (t) => {
  const { peer, send } = await startWithSmtp(t)

  const response = await send('SendEmail', {
    to: ['frank@example.com', 'grace@example.org'],
    subject: 'Weekly report',
    text: 'All systems nominal.',
    html: '<p>All systems <b>nominal</b>.</p>',
  })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.match(response.result.message_id, /^<.+@.+>$/)
  const { envelopeTo, mail } = peer.received[0] ?? assert.fail('no mail received')
  assert.deepEqual(envelopeTo, ['frank@example.com', 'grace@example.org'])
  assert.equal(mail.messageId, response.result.message_id)
  assert.equal(mail.subject, 'Weekly report')
  assert.equal(mail.text?.trim(), 'All systems nominal.')
  assert.equal(String(mail.html).trim(), '<p>All systems <b>nominal</b>.</p>')
  assert.deepEqual(addressesOf(mail.from), ['no-reply@atrium.test'])
})

test('SendEmail refuses line breaks in the subject or an address (header injection)', async (t) => {
  const { peer, send } = await startWithSmtp(t)

  const attempts = [
    { to: 'heidi@example.com', subject: 'Hello\r\nBcc: victim@example.net', text: 'x' },
    { to: 'heidi@example.com', subject: 'Hello\nBcc: victim@example.net', text: 'x' },
    { to: 'heidi@example.com\r\nBcc: victim@example.net', subject: 'Hello', text: 'x' },
    { to: ['heidi@example.com', 'ivan@example.com\nCc: victim@example.net'], subject: 'Hello', text: 'x' },
  ]
  for (const body of attempts) {
    const response = await send('SendEmail', body)
    assert.equal(response.status, 400, JSON.stringify(body))
    assert.equal(response.error?.code, 1000)
  }
  assert.equal(peer.received.length, 0)
})

test('SendEmailPassReset sends the reset link in the text and as the HTML link', async (t) => {
  const { peer, send } = await startWithSmtp(t)
  const link = 'https://atrium.example/auth/reset?token=abc123&crm=42'

  const response = await send('SendEmailPassReset', { email: 'judy@example.com', reset_url: link, crm_id: '42' })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.equal(response.result.to, 'j***@example.com')
  const { mail } = peer.received[0] ?? assert.fail('no mail received')
  assert.equal(mail.subject, 'Reset your password')
  assert.ok(mail.text?.includes(link), mail.text)
  assert.ok(String(mail.html).includes('href="https://atrium.example/auth/reset?token=abc123&amp;crm=42"'))
})

test('SendEmailPassReset refuses links that are not https (http only to localhost in development)', async (t) => {
  const { peer, send } = await startWithSmtp(t)

  for (const reset_url of ['http://atrium.example/reset', 'javascript:alert(1)', 'https://user:pw@atrium.example/']) {
    const response = await send('SendEmailPassReset', { email: 'ken@example.com', reset_url })
    assert.equal(response.status, 400, reset_url)
    assert.equal(response.error?.code, 1000)
  }
  assert.equal(peer.received.length, 0)

  const local = await send('SendEmailPassReset', {
    email: 'ken@example.com',
    reset_url: 'http://localhost:5173/reset?t=1',
  })
  assert.equal(local.status, 200, JSON.stringify(local.error))
  assert.equal(peer.received.length, 1)
})

test('a delivery call without the inter-service signature is refused', async (t) => {
  const { chat, peer } = await startWithSmtp(t)

  const response = await fetch(`${chat.base}/private/v1/SendEmailOTP`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'mallory@example.com', code: '1234' }),
  })

  assert.equal(response.status, 401)
  assert.equal((await json(response)).error.code, 1008)
  assert.equal(peer.received.length, 0)
})
