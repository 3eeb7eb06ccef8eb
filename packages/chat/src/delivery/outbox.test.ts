import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import test, { type TestContext } from 'node:test'
import { CommunicationChannel } from '@atrium/platform'
import { simpleParser } from 'mailparser'
import { addressesOf } from '../../test/smtp-peer.ts'
import { startChat } from '../../test/support.ts'

// The outbox directory is created on first use, so it is a not-yet-existing child of a temporary directory.
async function startWithOutbox(t: TestContext) {
  const root = await mkdtemp(join(tmpdir(), 'atrium-outbox-'))
  t.after(() => rm(root, { recursive: true, force: true }))
  const outbox = join(root, 'outbox')
  const chat = await startChat(t, 'sqlite', { Outbox: { Path: outbox } })
  const send = (operation: string, body: object) => chat.call('POST', `/private/v1/${operation}`, {}, body)
  async function read(extension = '.eml') {
    const names = (await readdir(outbox)).filter((name) => name.endsWith(extension)).sort()
    return Promise.all(names.map(async (name) => ({ name, raw: await readFile(join(outbox, name)) })))
  }
  return { outbox, send, read }
}

test('without an SMTP host, SendEmailOTP writes the message as an .eml file into the outbox', async (t) => {
  const { outbox, send, read } = await startWithOutbox(t)

  const response = await send('SendEmailOTP', { email: 'mia@example.com', code: '551902', purpose: 'sign-up' })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.deepEqual(response.result, { channel: 'email', to: 'm***@example.com' })
  const files = await read()
  assert.equal(files.length, 1)
  const [{ name, raw }] = files as [(typeof files)[0]]
  assert.match(name, /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-[0-9a-f]{8}\.eml$/)
  assert.ok(raw.includes('\r\n'), 'RFC 5322 line endings')
  const mail = await simpleParser(raw)
  assert.deepEqual(addressesOf(mail.to), ['mia@example.com'])
  assert.deepEqual(addressesOf(mail.from), ['no-reply@localhost'])
  assert.equal(mail.subject, 'Your sign-up code')
  assert.match(mail.text ?? '', /Your sign-up code is 551902/)
  assert.match(String(mail.html), />551902</)
  assert.equal((await stat(join(outbox, name))).mode & 0o777, 0o600)
})

test('SendOTP counts the outbox as the email channel', async (t) => {
  const { send, read } = await startWithOutbox(t)

  const response = await send('SendOTP', {
    email: 'noah@example.com',
    phone: '+441234567890',
    code: 'Q7Z9',
    channels: CommunicationChannel.Email | CommunicationChannel.SMS,
  })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.deepEqual(response.result, { channel: 'email', to: 'n***@example.com' })
  const [file] = await read()
  const mail = await simpleParser(file?.raw ?? assert.fail('no file in the outbox'))
  assert.deepEqual(addressesOf(mail.to), ['noah@example.com'])
  assert.match(mail.text ?? '', /Q7Z9/)
})

test('each message gets its own outbox file', async (t) => {
  const { send, read } = await startWithOutbox(t)

  for (const email of ['olivia@example.com', 'peter@example.com', 'quinn@example.com'])
    assert.equal(
      (await send('SendEmailPassReset', { email, reset_url: 'https://atrium.example/reset?t=1' })).status,
      200,
    )

  const recipients = await Promise.all((await read()).map(async ({ raw }) => addressesOf((await simpleParser(raw)).to)))
  assert.deepEqual(recipients.flat().sort(), ['olivia@example.com', 'peter@example.com', 'quinn@example.com'])
})

test('beside each .eml a readable .txt names the code and carries the magic link unencoded', async (t) => {
  const { send, read } = await startWithOutbox(t)
  // Long enough, and with `=`, to be folded and escaped by quoted-printable in the .eml.
  const link = `http://localhost:8080/auth/v1/magic?token=${'Ab3_-'.repeat(20)}&return_to=%2Fchat%2F`

  const response = await send('SendEmailOTP', { email: 'rosa@example.com', code: '804113', purpose: 'sign-in', link })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  const [eml] = await read('.eml')
  const [txt, ...more] = await read('.txt')
  assert.equal(more.length, 0)
  assert.equal(txt?.name.replace('.txt', '.eml'), eml?.name, 'one name for both files')
  assert.ok(!eml?.raw.toString().includes(link), 'the .eml holds the link quoted-printable')
  const text = txt?.raw.toString() ?? ''
  assert.ok(
    text.startsWith(
      `Channel: email\nTo: rosa@example.com\nSubject: Your sign-in code\nCode: 804113\nLink: ${link}\n\n`,
    ),
    text,
  )
  assert.ok(text.includes(`\n${link}\n`), 'the body keeps the link on one line')
})

test('in development without an SMS sender, a phone code goes to the outbox', async (t) => {
  const { outbox, send, read } = await startWithOutbox(t)

  const response = await send('SendOTP', {
    phone: '+441234567890',
    code: '318862',
    purpose: 'sign-in',
    channels: CommunicationChannel.SMS,
  })

  assert.equal(response.status, 200, JSON.stringify(response.error))
  assert.equal((response.result as { channel: string }).channel, 'sms')
  assert.deepEqual(await read('.eml'), [])
  const [txt] = await read('.txt')
  assert.equal(txt?.raw.toString(), 'Channel: sms\nTo: +441234567890\nCode: 318862\n\nYour sign-in code is 318862\n')
  assert.equal((await stat(join(outbox, txt?.name ?? ''))).mode & 0o777, 0o600)
})
