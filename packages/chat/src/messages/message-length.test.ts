import assert from 'node:assert/strict'
import { signFileToken } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { type ChatCaller, createGroup, SERVICE_SECRET, startChat } from '../../test/support.ts'
import { MAX_CONTENT } from './messages.schema.ts'

/** A text of exactly `length` characters (code points); an emoji is one character but two UTF-16 units. */
function textOf(length: number, unit = 'x'): string {
  return unit.repeat(length)
}

/** The chat's messages, oldest first, each as "<characters>×<first character>" (short enough for a diff). */
async function contents(reader: ChatCaller, chatId: string): Promise<string[]> {
  const { messages } = await reader.read('get_chat_messages', { chat_id: chatId, limit: 200 })
  return messages
    .map((message: { content: string }) => `${[...message.content].length}×${[...message.content][0]}`)
    .sort()
}

const describe = (...texts: string[]) => texts.map((text) => `${[...text].length}×${[...text][0]}`).sort()

function assertTooLong(answer: { status: number; error?: { code: number; message: string } }, length: number) {
  assert.equal(answer.status, 413)
  assert.equal(answer.error?.code, 3021)
  assert.match(answer.error?.message ?? '', new RegExp(`is ${length} characters long; at most ${MAX_CONTENT}`))
}

forEachDialect('a message of exactly the limit is sent; one character more is MessageTooLong', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  const atLimit = await chat.user(1).ok('send_message', { chat_id: groupId, content: textOf(MAX_CONTENT) })
  assert.equal(atLimit.content.length, MAX_CONTENT)
  // Characters are code points: the limit in emoji is twice as many UTF-16 units.
  const emoji = await chat.user(1).ok('send_message', { chat_id: groupId, content: textOf(MAX_CONTENT, '😀') })
  assert.equal([...emoji.content].length, MAX_CONTENT)
  assertTooLong(
    await chat.user(1).post('send_message', { chat_id: groupId, content: textOf(MAX_CONTENT + 1) }),
    MAX_CONTENT + 1,
  )
  assertTooLong(
    await chat.user(1).post('send_message', { chat_id: groupId, content: textOf(MAX_CONTENT + 1, '😀') }),
    MAX_CONTENT + 1,
  )
  assert.deepEqual(
    await contents(chat.user(2), groupId),
    describe(atLimit.content, emoji.content),
    'nothing over the limit was written',
  )
})

forEachDialect('replies, edits and file captions keep the same limit', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  const first = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'first' })
  const reply = { chat_id: groupId, reply_to: first.id }
  const replied = await chat.user(2).ok('send_message', { ...reply, content: textOf(MAX_CONTENT) })
  assert.equal(replied.link_kind, 'reply')
  assertTooLong(
    await chat.user(2).post('send_message', { ...reply, content: textOf(MAX_CONTENT + 1) }),
    MAX_CONTENT + 1,
  )

  const edited = await chat.user(1).ok('edit_message', { message_id: first.id, content: textOf(MAX_CONTENT) })
  assert.equal(edited.content.length, MAX_CONTENT)
  assertTooLong(
    await chat.user(1).post('edit_message', { message_id: first.id, content: textOf(MAX_CONTENT + 1) }),
    MAX_CONTENT + 1,
  )

  const file = (id: number) =>
    signFileToken(SERVICE_SECRET, {
      id,
      owner: 1,
      name: 'notes.txt',
      size: 5,
      type: 'text/plain',
      expires: Date.now() + 60_000,
    })
  const captioned = await chat
    .user(1)
    .ok('send_message', { chat_id: groupId, content: textOf(MAX_CONTENT), file: file(7001) })
  assert.equal(captioned.file.name, 'notes.txt')
  const tooLong = await chat
    .user(1)
    .post('send_message', { chat_id: groupId, content: textOf(MAX_CONTENT + 1), file: file(7002) })
  assertTooLong(tooLong, MAX_CONTENT + 1)
  assert.match(tooLong.error?.message ?? '', /^the caption/)

  assert.deepEqual(
    await contents(chat.user(2), groupId),
    describe(textOf(MAX_CONTENT), textOf(MAX_CONTENT), textOf(MAX_CONTENT)),
    'the edit, the reply and the caption at the limit; nothing longer',
  )
})

forEachDialect('a forward of a message at the limit arrives whole', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const long = await chat.user(1).ok('send_message', { chat_id: groupId, content: textOf(MAX_CONTENT, '😀') })
  const forwarded = await chat.user(1).ok('forward_message', { message_id: long.id, to_chat_id: direct.id })
  assert.equal(forwarded.content, long.content)
  assert.deepEqual(await contents(chat.user(2), direct.id), describe(long.content))
})
