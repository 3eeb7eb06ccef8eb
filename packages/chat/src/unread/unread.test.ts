import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { createGroup, startChat } from '../../test/support.ts'

/** Ids are timeticks written as decimal strings: compared as the numbers they are. */
const compareIds = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)

forEachDialect('unread counts messages by others after the read marker, and mark_read moves it', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  await chat.user(2).ok('send_message', { chat_id: groupId, content: 'mine' })
  const sent = []
  for (const content of ['one', 'two', 'three'])
    sent.push(await chat.user(1).ok('send_message', { chat_id: groupId, content }))
  const unread = await chat.user(2).read('get_unread_messages')
  assert.equal(unread.total, 3)
  assert.deepEqual(
    unread.chats[0].messages.map((message: { content: string }) => message.content),
    ['one', 'two', 'three'],
  )
  const marked = await chat.user(2).ok('mark_read', { chat_id: groupId, message_id: sent[1].id })
  assert.deepEqual(marked, { chat_id: groupId, last_read: sent[1].id, unread: 1 })
  const info = await chat.user(2).read('get_chat_info', { chat_id: groupId })
  assert.equal(info.unread, 1)
  const back = await chat.user(2).ok('mark_read', { chat_id: groupId, message_id: sent[0].id })
  assert.equal(back.last_read, sent[1].id, 'the marker never moves back')
  await chat.user(2).ok('mark_read', { chat_id: groupId })
  assert.equal((await chat.user(2).read('get_unread_messages')).total, 0)
  assert.equal((await chat.user(1).read('get_unread_messages')).total, 0, 'sending marks the chat read for the sender')
})

forEachDialect('reading emits MessageRead with the ids that were read', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const first = await chat.user(1).ok('send_message', { chat_id: direct.id, content: 'a' })
  const second = await chat.user(1).ok('send_message', { chat_id: direct.id, content: 'b' })
  const { result: before } = await chat.events({ subjects: 'user:1' })
  await chat.user(2).ok('mark_read', { chat_id: direct.id })
  const { result } = await chat.events({ subjects: 'user:1', since: before.LastTick })
  const read = result.Events.find((event: { EventType: string }) => event.EventType === 'MessageRead')
  assert.deepEqual(read.Data.message_ids, [first.id, second.id])
  assert.equal(read.Data.reader, '2')
  assert.equal(read.Data.last_read_id, second.id)
  await chat.user(2).ok('mark_read', { chat_id: direct.id })
  const { result: again } = await chat.events({ subjects: 'user:1', since: result.LastTick })
  assert.deepEqual(again.Events, [], 'reading nothing new emits nothing')
})

forEachDialect('unread stays exact while sends and reads run concurrently', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2, 3])
  const read: string[] = []
  for (let i = 0; i < 10; i++)
    read.push((await chat.user(1).ok('send_message', { chat_id: groupId, content: `r${i}` })).id)
  // Member 3 marks each of the read messages, in a scrambled order, while 1 and 2 send 20 more:
  // the marker only moves forward, so it ends on the newest message named, whatever the order.
  const order = [4, 9, 0, 7, 2, 8, 1, 6, 3, 5]
  const sends = Array.from({ length: 20 }, (_, i) =>
    chat.user(1 + (i % 2)).ok('send_message', { chat_id: groupId, content: `m${i}` }),
  )
  const reads = order.map((i) => chat.user(3).ok('mark_read', { chat_id: groupId, message_id: read[i] }))
  const [sent] = await Promise.all([Promise.all(sends), Promise.all(reads)])
  const expected = sent.map((message: { id: string }) => message.id).sort(compareIds)

  const info = await chat.user(3).read('get_chat_info', { chat_id: groupId })
  assert.equal(info.unread, expected.length)
  const unread = await chat.user(3).read('get_unread_messages', { limit: 100 })
  assert.equal(unread.total, expected.length)
  assert.equal(unread.chats[0].last_read, read[9])
  assert.deepEqual(
    unread.chats[0].messages.map((message: { id: string }) => message.id),
    expected,
  )
  await chat.user(3).ok('mark_read', { chat_id: groupId })
  assert.equal((await chat.user(3).read('get_chat_info', { chat_id: groupId })).unread, 0)
})

forEachDialect(
  'a read marker named behind the stored one leaves it, its count and the feed as they were',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 3)
    const groupId = await createGroup(chat.user(1), [2])
    const sent = []
    for (const content of ['one', 'two', 'three'])
      sent.push(await chat.user(1).ok('send_message', { chat_id: groupId, content }))
    await chat.user(2).ok('mark_read', { chat_id: groupId, message_id: sent[1].id })
    const { result: before } = await chat.events({ subjects: 'user:1' })

    await chat.user(2).ok('mark_read', { chat_id: groupId, message_id: sent[0].id })
    await chat.user(1).ok('send_message', { chat_id: groupId, content: 'four' })

    const unread = await chat.user(2).read('get_unread_messages')
    assert.equal(unread.chats[0].last_read, sent[1].id, 'the stored marker stays on the newer message')
    assert.deepEqual(
      unread.chats[0].messages.map((message: { content: string }) => message.content),
      ['three', 'four'],
    )
    assert.equal((await chat.user(2).read('get_chat_info', { chat_id: groupId })).unread, 2)
    // The message sent after the attempt is the barrier: a MessageRead from it would come first.
    const { result } = await chat.events({ subjects: 'user:1', since: before.LastTick })
    assert.deepEqual(
      result.Events.map((event: { EventType: string }) => event.EventType),
      ['NewChatMessage'],
    )
  },
)

forEachDialect('mark_read of a message in another chat is refused', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  const other = await createGroup(chat.user(1), [2])
  const elsewhere = await chat.user(1).ok('send_message', { chat_id: other, content: 'x' })
  const response = await chat.user(2).post('mark_read', { chat_id: groupId, message_id: elsewhere.id })
  assert.equal(response.error?.code, 3001, 'a message of another chat is not a read marker here')
  assert.equal((await chat.user(3).post('mark_read', { chat_id: groupId })).status, 404)
})

forEachDialect('a chat view counts as unread exactly the messages up to its last_message', async (t, dialect) => {
  // The client adds a NewChatMessage to a view's count only when the message is newer than the
  // view's last_message: a view that counted a message it did not name would count it twice.
  const chat = await startChat(t, dialect)
  await chat.register(1, 2)
  const groupId = await createGroup(chat.user(1), [2])
  const sent: string[] = []
  let sending = true
  const sends = (async () => {
    for (let i = 0; i < 40; i++)
      sent.push((await chat.user(1).ok('send_message', { chat_id: groupId, content: `m${i}` })).id)
    sending = false
  })()
  const views: { unread: number; last_message: string }[] = []
  const reader = async () => {
    while (sending) {
      views.push(await chat.user(2).read('get_chat_info', { chat_id: groupId }))
      views.push((await chat.user(2).read('get_chats')).chats[0])
    }
  }
  await Promise.all([sends, reader(), reader(), reader()])
  assert.ok(views.length >= 40, `${views.length} views read while sending`)
  for (const view of views)
    assert.equal(
      view.unread,
      sent.filter((id) => compareIds(id, view.last_message) <= 0).length,
      `the view naming ${view.last_message} as last message`,
    )
})
