import assert from 'node:assert/strict'
import { createDatabase, FeedbackType } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect } from '@atrium/platform/testing'
import { startChatOn } from '../../test/support.ts'
import type { ChatDatabase } from '../db/schema.ts'

forEachDialect(
  'the first open_discussion creates the chat about an object; later callers join it',
  async (t, dialect) => {
    const chat = await startChatOn(t, await createTestDatabaseUrl(t, dialect))
    const about = { object_type: FeedbackType.Order, object_id: 'A-1042' }
    const first = await chat.user(100).ok('open_discussion', about)
    assert.deepEqual([first.created, first.joined], [true, true])
    assert.equal(first.chat.name, 'Discussion: Order A-1042')
    assert.deepEqual([first.chat.context, first.chat.object_type, first.chat.object_id], ['discussion', 4, 'A-1042'])
    assert.equal(first.chat.role, 0, 'the opener is a plain member, not an admin')

    const second = await chat.user(200).ok('open_discussion', about)
    assert.deepEqual([second.created, second.joined, second.chat.id], [false, true, first.chat.id])
    assert.equal(second.chat.member_count, 2)
    const again = await chat.user(200).ok('open_discussion', about)
    assert.deepEqual([again.created, again.joined], [false, false])

    const other = await chat.user(100).ok('open_discussion', { object_type: FeedbackType.Product, object_id: 'A-1042' })
    assert.notEqual(other.chat.id, first.chat.id, 'another object type is another discussion')
    // A joined member reads what was written before they came.
    await chat.user(100).ok('send_message', { chat_id: first.chat.id, content: 'Where is it?' })
    const { messages } = await chat.user(200).read('get_chat_messages', { chat_id: first.chat.id })
    assert.deepEqual(
      messages.map((message: { content: string }) => message.content),
      ['Where is it?'],
    )
  },
)

forEachDialect('parallel open_discussion about one object stores one chat and each member once', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  const chat = await startChatOn(t, url)
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  const about = { object_type: FeedbackType.Service, object_id: 'delivery' }
  await Promise.all(Array.from({ length: 12 }, () => chat.user(1).read('get_chats')))
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, index) => chat.user(100 + (index % 4)).post('open_discussion', about)),
  )
  assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([200]))
  assert.equal(answers.filter((answer) => answer.result.created).length, 1)
  const chats = await database.db
    .selectFrom('chats')
    .select('timetick')
    .where('pair_key', '=', `discuss:${FeedbackType.Service}:delivery`)
    .execute()
  assert.equal(chats.length, 1)
  const members = await database.db
    .selectFrom('chat_members')
    .select('member')
    .where('chat_id', '=', chats[0]!.timetick)
    .execute()
  assert.deepEqual(members.map((row) => row.member).sort(), [100, 101, 102, 103])
})

forEachDialect('open_discussion refuses guests, unknown object types and malformed ids', async (t, dialect) => {
  const chat = await startChatOn(t, await createTestDatabaseUrl(t, dialect))
  for (const body of [
    { object_type: 99, object_id: 'x' },
    { object_type: 4, object_id: '' },
    { object_type: 4, object_id: 'a/b' },
    { object_type: 4, object_id: 'x'.repeat(65) },
  ]) {
    const answer = await chat.user(1).post('open_discussion', body)
    assert.equal(answer.status, 400, JSON.stringify(body))
    assert.equal(answer.error?.code, 1000)
  }
  const guest = await chat
    .guest('no-such-code', 'device-guid-1234')
    .post('open_discussion', { object_type: 4, object_id: 'x' })
  assert.equal(guest.status, 401)
})
