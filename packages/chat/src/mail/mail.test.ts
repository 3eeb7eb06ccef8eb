import assert from 'node:assert/strict'
import { ChatMessFlags, errorCodes } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { startChat } from '../../test/support.ts'

const OWNER = 5_100_001

async function setUp(t: Parameters<typeof startChat>[0], dialect: Parameters<typeof startChat>[1]) {
  const chat = await startChat(t, dialect)
  await chat.register([OWNER, 'Olga'])
  const { code } = await chat.user(OWNER).ok('create_invite', { kind: 'personal' })
  const receive = (body: object) =>
    chat.call(
      'POST',
      '/private/v1/ReceiveEmail',
      {},
      {
        recipient: `${code}@atrium.test`,
        local: code,
        from: { address: 'Alice@Example.org', name: 'Alice' },
        subject: 'Hello',
        text: 'Body',
        message_id: '<m1@example.org>',
        ...body,
      },
    )
  return { chat, code: code as string, receive }
}

forEachDialect('MailRecipient knows invite codes and registered users, not guests or strangers', async (t, dialect) => {
  const { chat, code, receive } = await setUp(t, dialect)
  const ask = (local: string) => chat.call('POST', '/private/v1/MailRecipient', {}, { local })
  const stored = await receive({})
  const guestId = (await chat.user(OWNER).read('get_chat_info', { chat_id: stored.result.chat_id })).peer

  // The owner is whose quota attachments count against: the invite's creator, or the user.
  assert.deepEqual((await ask(code)).result, { kind: 'invite', owner: String(OWNER) })
  assert.deepEqual((await ask(String(OWNER))).result, { kind: 'user', owner: String(OWNER) })
  for (const local of ['Unknown1code', '42', guestId]) {
    const answer = await ask(local)
    assert.equal(answer.status, 404, local)
    assert.equal(answer.error?.code, errorCodes.MailRecipientUnknown.code, local)
  }
  assert.equal((await ask('a.b')).status, 400, 'a local part is letters and digits')
})

forEachDialect('ReceiveEmail refuses bad input with an envelope error and stores nothing', async (t, dialect) => {
  const { chat, receive } = await setUp(t, dialect)
  const cases: [string, object, number, number][] = [
    ['NUL in the text', { text: 'a\u0000b' }, 400, errorCodes.InvalidRequest.code],
    ['NUL in the subject', { subject: 'a\u0000b' }, 400, errorCodes.InvalidRequest.code],
    ['a Message-ID without brackets', { message_id: 'm1@example.org' }, 400, errorCodes.InvalidRequest.code],
    ['a sender that is no address', { from: { address: 'nobody', name: '' } }, 400, errorCodes.InvalidRequest.code],
    ['text over 16,384 characters', { text: 'x'.repeat(16_385) }, 413, errorCodes.MessageTooLong.code],
    ['an unknown code', { local: 'Unknown1code' }, 404, errorCodes.MailRecipientUnknown.code],
    ...(
      [
        ['a file name with NUL', { name: 'a\u0000b' }],
        ['a file name with a path separator', { name: '../etc/passwd' }],
        ['a file name with a backslash', { name: '..\\boot.ini' }],
        ['an empty file name', { name: '' }],
        ['a file name of 256 characters', { name: 'x'.repeat(256) }],
        ['a file id that is no id', { id: '0' }],
        ['a negative file size', { size: -1 }],
      ] as const
    ).map(([name, file]): [string, object, number, number] => [
      name,
      { files: [{ id: '123', name: 'a.txt', size: 1, type: 'text/plain', ...file }] },
      400,
      errorCodes.InvalidRequest.code,
    ]),
  ]
  for (const [name, body, status, code] of cases) {
    const answer = await receive(body)
    assert.equal(answer.status, status, `${name}: ${JSON.stringify(answer.error)}`)
    assert.equal(answer.error?.code, code, name)
  }
  const { chats } = await chat.user(OWNER).read('get_chats')
  assert.deepEqual(chats, [], 'no guest conversation was made')

  const stored = await receive({ text: 'x'.repeat(16_384) })
  assert.equal(stored.status, 200, 'exactly the limit is accepted')
  const { messages } = await chat.user(OWNER).read('get_chat_messages', { chat_id: stored.result.chat_id })
  assert.equal(messages.length, 1)
  assert.equal(messages[0].flags, ChatMessFlags.Email)
})

forEachDialect('each file of a mail follows its text as a file message with the Email flag', async (t, dialect) => {
  const { chat, receive } = await setUp(t, dialect)
  const files = [
    { id: '9000000000001', name: 'plan.pdf', size: 48_213, type: 'application/pdf' },
    { id: '9000000000002', name: 'Überblick März.png', size: 7, type: 'image/png' },
  ]
  const stored = await receive({ text: 'See the files', message_id: '<files@example.org>', files })
  assert.equal(stored.status, 200, JSON.stringify(stored.error))
  const newestFirst = await chat.user(OWNER).read('get_chat_messages', { chat_id: stored.result.chat_id })
  const messages = [...newestFirst.messages].sort((a: { id: string }, b: { id: string }) =>
    BigInt(a.id) < BigInt(b.id) ? -1 : 1,
  )
  assert.deepEqual(
    messages.map((m: { content: string; flags: number; file: unknown }) => [m.content, m.flags, m.file]),
    [
      ['See the files', ChatMessFlags.Email, null],
      ...files.map((file) => ['', ChatMessFlags.Email | ChatMessFlags.File, file]),
    ],
  )
  assert.equal(messages[0].id, stored.result.message_id, 'the answer names the text message')

  // A retried delivery stores neither the text nor the files again.
  const again = await receive({ text: 'See the files', message_id: '<files@example.org>', files })
  assert.equal(again.result.duplicate, true)
  const after = await chat.user(OWNER).read('get_chat_messages', { chat_id: stored.result.chat_id })
  assert.equal(after.messages.length, 3)
})

forEachDialect('parallel deliveries of one mail store one message in one conversation', async (t, dialect) => {
  const { chat, receive } = await setUp(t, dialect)

  const answers = await Promise.all(Array.from({ length: 6 }, () => receive({ message_id: '<parallel@example.org>' })))
  // Then six different mails of the same new sender, in parallel: still one guest and one chat.
  const others = await Promise.all(
    Array.from({ length: 6 }, (_, i) => receive({ message_id: `<other-${i}@example.org>`, text: `mail ${i}` })),
  )

  for (const answer of [...answers, ...others]) assert.equal(answer.status, 200, JSON.stringify(answer.error))
  assert.equal(answers.filter((answer) => !answer.result.duplicate).length, 1)
  assert.equal(new Set(answers.map((answer) => answer.result.message_id)).size, 1)
  const { chats } = await chat.user(OWNER).read('get_chats')
  assert.equal(chats.length, 1, 'one guest conversation')
  const { messages } = await chat.user(OWNER).read('get_chat_messages', { chat_id: chats[0].id })
  assert.equal(messages.length, 7)
})
