import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { createDatabase, type DatabaseDialect, type EventBatch, signedHeaders } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, json } from '@atrium/platform/testing'
import { type ChatClient, SERVICE_SECRET, startChatOn } from '../../test/support.ts'
import type { ChatDatabase } from '../db/schema.ts'

/** send_message as the gateway passes it on, with the sender's Idempotency-Key; the status, envelope and replay header. */
async function sendWithKey(chat: ChatClient, sender: number, key: string, body: object) {
  const path = '/msg/v1/send_message'
  const response = await fetch(`${chat.base}${path}`, {
    method: 'POST',
    headers: signedHeaders(SERVICE_SECRET, 'POST', path, {
      'x-crm': String(sender),
      'idempotency-key': key,
      'content-type': 'application/json',
    }),
    body: JSON.stringify(body),
  })
  return { status: response.status, replayed: response.headers.get('idempotent-replayed'), ...(await json(response)) }
}

/** The NewChatMessage events of the chat in the feed, by message id. */
async function newMessageEvents(chat: ChatClient, chatId: string): Promise<string[]> {
  const batch = (await chat.events({ subjects: 'user:1', limit: 1000 })).result as EventBatch
  return batch.Events.filter((item) => item.EventType === 'NewChatMessage' && item.Data.chat_id === chatId).map(
    (item) => String(item.Data.message_id),
  )
}

async function startPair(t: TestContext, dialect: DatabaseDialect) {
  const url = await createTestDatabaseUrl(t, dialect)
  const chat = await startChatOn(t, url, { ServiceSecret: SERVICE_SECRET })
  await chat.register(1, 2)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  return { chat, url, chatId: direct.id as string }
}

forEachDialect(
  'a send repeated with its Idempotency-Key answers the first message and posts nothing',
  async (t, dialect) => {
    const { chat, chatId } = await startPair(t, dialect)
    const first = await sendWithKey(chat, 1, 'send-1', { chat_id: chatId, content: 'once' })
    assert.equal(first.status, 200, JSON.stringify(first.error))
    assert.equal(first.replayed, null)
    const again = await sendWithKey(chat, 1, 'send-1', { chat_id: chatId, content: 'once' })
    assert.equal(again.status, 200)
    assert.equal(again.replayed, 'true')
    assert.deepEqual(again.result, first.result, 'the first answer, again')

    // The same key of another sender is theirs; a new key posts a new message.
    assert.equal((await sendWithKey(chat, 2, 'send-1', { chat_id: chatId, content: 'once' })).replayed, null)
    assert.equal((await sendWithKey(chat, 1, 'send-2', { chat_id: chatId, content: 'once' })).replayed, null)
    const { messages } = await chat.user(1).read('get_chat_messages', { chat_id: chatId })
    assert.equal(messages.length, 3)
    assert.deepEqual(
      (await newMessageEvents(chat, chatId)).filter((id) => id === first.result.id),
      [first.result.id],
      'one event for the first message',
    )
  },
)

forEachDialect('an Idempotency-Key used for another send, or malformed, is refused', async (t, dialect) => {
  const { chat, chatId } = await startPair(t, dialect)
  assert.equal((await sendWithKey(chat, 1, 'k', { chat_id: chatId, content: 'first' })).status, 200)
  const other = await sendWithKey(chat, 1, 'k', { chat_id: chatId, content: 'second' })
  assert.equal(other.status, 422)
  assert.equal(other.error.code, 4010)
  const malformed = await sendWithKey(chat, 1, 'no spaces', { chat_id: chatId, content: 'third' })
  assert.equal(malformed.status, 400)
  assert.equal(malformed.error.code, 4011)
  const { messages } = await chat.user(1).read('get_chat_messages', { chat_id: chatId })
  assert.deepEqual(
    messages.map((message: { content: string }) => message.content),
    ['first'],
  )
})

forEachDialect('a refused send stores no key: the same key posts once the cause is gone', async (t, dialect) => {
  const { chat, chatId } = await startPair(t, dialect)
  await chat.register(3)
  const refused = await sendWithKey(chat, 3, 'join-first', { chat_id: chatId, content: 'hello' })
  assert.equal(refused.status, 404, JSON.stringify(refused))
  const { chat: group } = await chat.user(1).ok('create_chat', { type: 2, name: 'Team', members: ['3'] })
  const posted = await sendWithKey(chat, 3, 'join-first', { chat_id: group.id, content: 'hello' })
  assert.equal(posted.status, 200, JSON.stringify(posted.error))
  assert.equal(posted.replayed, null)
})

forEachDialect('parallel sends with one Idempotency-Key post one message and one event', async (t, dialect) => {
  const { chat, chatId } = await startPair(t, dialect)
  const answers = await Promise.all(
    Array.from({ length: 12 }, () => sendWithKey(chat, 1, 'parallel', { chat_id: chatId, content: 'racing' })),
  )
  for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.error))
  const ids = new Set(answers.map((answer) => answer.result.id))
  assert.equal(ids.size, 1, 'every answer names one message')
  assert.equal(answers.filter((answer) => answer.replayed === null).length, 1, 'one request posted it')
  const { messages } = await chat.user(1).read('get_chat_messages', { chat_id: chatId })
  assert.deepEqual(
    messages.map((message: { id: string }) => message.id),
    [...ids],
  )
  assert.deepEqual(await newMessageEvents(chat, chatId), [...ids], 'one event')
})

forEachDialect('a key past IdempotencyKeyHours is forgotten: it posts again', async (t, dialect) => {
  const { chat, url, chatId } = await startPair(t, dialect)
  const first = await sendWithKey(chat, 1, 'yesterday', { chat_id: chatId, content: 'old' })
  assert.equal(first.status, 200)
  // The key was used longer ago than the 24 hours it is kept.
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  await database.db
    .updateTable('send_keys')
    .set({ created: Date.now() - 25 * 3_600_000 })
    .where('idem_key', '=', 'yesterday')
    .execute()
  const again = await sendWithKey(chat, 1, 'yesterday', { chat_id: chatId, content: 'new' })
  assert.equal(again.status, 200, JSON.stringify(again.error))
  assert.equal(again.replayed, null)
  assert.notEqual(again.result.id, first.result.id)
  const repeat = await sendWithKey(chat, 1, 'yesterday', { chat_id: chatId, content: 'new' })
  assert.equal(repeat.replayed, 'true')
  assert.equal(repeat.result.id, again.result.id)
})
