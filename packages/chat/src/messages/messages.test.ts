import assert from 'node:assert/strict'
import { ChatMessFlags } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { createGroup, startChat } from '../../test/support.ts'
import { MAX_CONTENT } from './messages.schema.ts'

forEachDialect('a sent message appears in the feed with its owner, content and time', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const sent = await chat.user(1).ok('send_message', { chat_id: direct.id, content: 'Hello **Bob**' })
  assert.equal(sent.owner, '1')
  assert.equal(sent.content, 'Hello **Bob**')
  assert.equal(sent.link_kind, 'none')
  assert.ok(Math.abs(Date.parse(sent.time) - Date.now()) < 5000)
  const { messages, has_more } = await chat.user(2).read('get_chat_messages', { chat_id: direct.id })
  assert.equal(has_more, false)
  assert.deepEqual(
    messages.map((message: { id: string; content: string }) => [message.id, message.content]),
    [[sent.id, 'Hello **Bob**']],
  )
})

forEachDialect('non-members can neither read nor post', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  await chat.user(1).ok('send_message', { chat_id: groupId, content: 'members only' })
  const read = await chat.user(3).get('get_chat_messages', { chat_id: groupId })
  assert.equal(read.status, 404)
  assert.equal(read.error?.code, 3000)
  assert.equal(read.result, undefined, 'no messages in the refusal')
  const post = await chat.user(3).post('send_message', { chat_id: groupId, content: 'let me in' })
  assert.equal(post.status, 404)
  assert.equal(post.error?.code, 3000)
  const { messages } = await chat.user(1).read('get_chat_messages', { chat_id: groupId })
  assert.deepEqual(
    messages.map((message: { content: string }) => message.content),
    ['members only'],
    'nothing was written',
  )
})

forEachDialect(
  'paging goes back with before and forward with after, stable under concurrent sends',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 3, 4)
    const groupId = await createGroup(chat.user(1), [2])
    const sent: string[] = []
    for (let i = 0; i < 7; i++)
      sent.push((await chat.user(1).ok('send_message', { chat_id: groupId, content: `m${i}` })).id)
    const first = await chat.user(2).read('get_chat_messages', { chat_id: groupId, limit: 3 })
    assert.deepEqual(
      first.messages.map((m: { content: string }) => m.content),
      ['m6', 'm5', 'm4'],
    )
    assert.equal(first.has_more, true)
    // New messages arriving between pages do not shift older pages.
    await Promise.all([1, 2].map((n) => chat.user(1).ok('send_message', { chat_id: groupId, content: `late${n}` })))
    const second = await chat
      .user(2)
      .read('get_chat_messages', { chat_id: groupId, limit: 3, before: first.messages.at(-1).id })
    assert.deepEqual(
      second.messages.map((m: { content: string }) => m.content),
      ['m3', 'm2', 'm1'],
    )
    const newer = await chat.user(2).read('get_chat_messages', { chat_id: groupId, after: sent[6], limit: 10 })
    assert.deepEqual(newer.messages.map((m: { content: string }) => m.content).sort(), ['late1', 'late2'])
    const both = await chat.user(2).get('get_chat_messages', { chat_id: groupId, after: sent[0], before: sent[6] })
    assert.equal(both.status, 400)
  },
)

forEachDialect('a reply carries a preview of its linked message', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  const original = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'Lunch at noon?' })
  const reply = await chat.user(2).ok('send_message', { chat_id: groupId, content: 'Yes', reply_to: original.id })
  assert.equal(reply.link_kind, 'reply')
  assert.equal(reply.linked_message_id, original.id)
  assert.deepEqual(reply.reply_to, { id: original.id, owner: '1', content: 'Lunch at noon?', deleted: false })
  await chat.user(1).ok('soft_delete_message', { message_id: original.id })
  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: groupId })
  assert.deepEqual(messages[0].reply_to, { id: original.id, owner: '1', content: '', deleted: true })
  const otherChat = await createGroup(chat.user(1), [2])
  const crossChat = await chat.user(2).post('send_message', { chat_id: otherChat, content: 'x', reply_to: reply.id })
  assert.equal(crossChat.error?.code, 3001)
})

forEachDialect('reactions are rows of their own, aggregated under the target and toggled', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2, 3])
  const target = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'Ship it' })
  await chat.user(2).ok('toggle_message_reaction', { message_id: target.id, emoji: '👍' })
  await chat.user(3).ok('send_message', { chat_id: groupId, content: '👍', reaction_to: target.id })
  const hearts = await chat.user(3).ok('toggle_message_reaction', { message_id: target.id, emoji: '❤️' })
  assert.equal(hearts.added, true)
  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: groupId })
  assert.equal(messages.length, 1, 'reaction rows are not feed entries')
  assert.deepEqual(messages[0].reactions, [
    { emoji: '❤️', count: 1, mine: false },
    { emoji: '👍', count: 2, mine: true },
  ])
  const removed = await chat.user(2).ok('toggle_message_reaction', { message_id: target.id, emoji: '👍' })
  assert.equal(removed.added, false)
  assert.deepEqual(removed.message.reactions, [
    { emoji: '❤️', count: 1, mine: false },
    { emoji: '👍', count: 1, mine: false },
  ])
  // An older page, reached with before, carries its own messages' reactions.
  await chat.user(1).ok('send_message', { chat_id: groupId, content: 'later 1' })
  await chat.user(1).ok('send_message', { chat_id: groupId, content: 'later 2' })
  const newest = await chat.user(3).read('get_chat_messages', { chat_id: groupId, limit: 2 })
  assert.deepEqual(
    newest.messages.map((message: { reactions: unknown[] }) => message.reactions),
    [[], []],
  )
  const older = await chat.user(3).read('get_chat_messages', { chat_id: groupId, before: newest.messages[1].id })
  assert.equal(older.messages[0].id, target.id)
  assert.deepEqual(older.messages[0].reactions, [
    { emoji: '❤️', count: 1, mine: true },
    { emoji: '👍', count: 1, mine: true },
  ])
})

forEachDialect('only the author edits; an edit keeps the id and marks the message edited', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  const sent = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'teh plan' })
  const refused = await chat.user(2).post('edit_message', { message_id: sent.id, content: 'hacked' })
  assert.equal(refused.status, 403)
  assert.equal(refused.error?.code, 3003)
  const edited = await chat.user(1).ok('edit_message', { message_id: sent.id, content: 'the plan' })
  assert.equal(edited.id, sent.id)
  assert.equal(edited.content, 'the plan')
  assert.equal(edited.edited, true)
})

forEachDialect('pin and unpin toggle the Pin flag; in groups only admins pin', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  const sent = await chat.user(2).ok('send_message', { chat_id: groupId, content: 'rules' })
  assert.equal((await chat.user(2).post('pin_message', { message_id: sent.id })).error?.code, 3002)
  const pinned = await chat.user(1).ok('pin_message', { message_id: sent.id })
  assert.equal(pinned.pinned, true)
  assert.equal(pinned.flags & ChatMessFlags.Pin, ChatMessFlags.Pin)
  const unpinned = await chat.user(1).ok('unpin_message', { message_id: sent.id })
  assert.equal(unpinned.flags & ChatMessFlags.Pin, 0)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const dm = await chat.user(1).ok('send_message', { chat_id: direct.id, content: 'note' })
  assert.equal((await chat.user(2).ok('pin_message', { message_id: dm.id })).pinned, true)
})

forEachDialect('soft delete keeps the row and sets the Deleted flag; only author or admin', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2, 3])
  const sent = await chat.user(2).ok('send_message', { chat_id: groupId, content: 'oops' })
  assert.equal((await chat.user(3).post('soft_delete_message', { message_id: sent.id })).status, 403)
  const deleted = await chat.user(1).ok('soft_delete_message', { message_id: sent.id })
  assert.equal(deleted.deleted, true)
  assert.equal(deleted.flags & ChatMessFlags.Deleted, ChatMessFlags.Deleted)
  assert.equal(deleted.content, '')
  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: groupId })
  assert.equal(messages.length, 0, 'the feed leaves deleted messages out')
  const edit = await chat.user(2).post('edit_message', { message_id: sent.id, content: 'back' })
  assert.equal(edit.error?.code, 3011)
})

forEachDialect('hard delete needs configuration, then removes the row and its reactions', async (t, dialect) => {
  const disabled = await startChat(t, dialect)
  await disabled.register(1, 2, 3, 4)
  const groupA = await createGroup(disabled.user(1), [])
  const kept = await disabled.user(1).ok('send_message', { chat_id: groupA, content: 'stays' })
  assert.equal((await disabled.user(1).post('hard_delete_message', { message_id: kept.id })).error?.code, 3006)

  const chat = await startChat(t, dialect, { HardDelete: { Messages: true } })
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  const sent = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'gone' })
  await chat.user(2).ok('toggle_message_reaction', { message_id: sent.id, emoji: '😮' })
  await chat.user(1).ok('hard_delete_message', { message_id: sent.id })
  assert.equal((await chat.user(1).post('edit_message', { message_id: sent.id, content: 'x' })).error?.code, 3001)
})

forEachDialect('forward copies a message into another chat the caller may post in', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const source = await createGroup(chat.user(1), [2])
  const target = await createGroup(chat.user(2), [3])
  const sent = await chat.user(1).ok('send_message', { chat_id: source, content: 'FYI' })
  const forwarded = await chat.user(2).ok('forward_message', { message_id: sent.id, to_chat_id: target })
  assert.equal(forwarded.chat_id, target)
  assert.equal(forwarded.forwarded_from, sent.id)
  assert.equal(forwarded.owner, '2')
  assert.equal(forwarded.content, 'FYI')
  const intoForeign = await chat.user(1).post('forward_message', { message_id: sent.id, to_chat_id: target })
  assert.equal(intoForeign.status, 404)
})

forEachDialect(
  'a forward of a forward names the original message, not the copy it was made from',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 3, 4)
    const first = await createGroup(chat.user(1), [2])
    const second = await createGroup(chat.user(2), [3])
    const third = await createGroup(chat.user(3), [4])
    const original = await chat.user(1).ok('send_message', { chat_id: first, content: 'from the source' })
    const copy = await chat.user(2).ok('forward_message', { message_id: original.id, to_chat_id: second })
    const copyOfCopy = await chat.user(3).ok('forward_message', { message_id: copy.id, to_chat_id: third })
    assert.equal(copy.forwarded_from, original.id)
    assert.equal(copyOfCopy.forwarded_from, original.id)
    assert.equal(copyOfCopy.content, 'from the source')
    const { messages } = await chat.user(4).read('get_chat_messages', { chat_id: third })
    assert.deepEqual(
      messages.map((message: { id: string; forwarded_from: string }) => [message.id, message.forwarded_from]),
      [[copyOfCopy.id, original.id]],
    )
  },
)

forEachDialect('a widget is capped at the content length as JSON, writing nothing when longer', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  // {"text":"…"} is 11 characters around the text.
  const fits = await chat.user(1).ok('send_message', {
    chat_id: groupId,
    content: '',
    widget: { text: 'x'.repeat(MAX_CONTENT - 11) },
  })
  assert.equal(fits.content.length, MAX_CONTENT)
  for (const widget of [{ text: 'x'.repeat(MAX_CONTENT - 10) }, { text: 'x'.repeat(20_000) }]) {
    const tooLong = await chat.user(1).post('send_message', { chat_id: groupId, content: '', widget })
    assert.equal(tooLong.status, 413)
    assert.equal(tooLong.error?.code, 3021)
    assert.match(tooLong.error?.message ?? '', /the widget as JSON is \d+ characters long; at most 16384/)
  }
  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: groupId })
  assert.deepEqual(
    messages.map((message: { id: string }) => message.id),
    [fits.id],
  )
})

forEachDialect('in an info channel only admins post, members read and react', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const channel = await createGroup(chat.user(1), [2], 4, 'News')
  const post = await chat.user(1).ok('send_message', { chat_id: channel, content: 'Release 1.0' })
  const reader = await chat.user(2).post('send_message', { chat_id: channel, content: 'me too' })
  assert.equal(reader.status, 403)
  assert.equal(reader.error?.code, 3002)
  await chat.user(2).ok('toggle_message_reaction', { message_id: post.id, emoji: '🎉' })
})

forEachDialect('widget JSON is stored with the Widget flag', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [])
  const widget = { kind: 'poll', question: 'Tea?', options: ['yes', 'no'] }
  const sent = await chat.user(1).ok('send_message', { chat_id: groupId, content: '', widget })
  assert.equal(sent.flags & ChatMessFlags.Widget, ChatMessFlags.Widget)
  assert.deepEqual(JSON.parse(sent.content), widget)
})

forEachDialect('bad input is refused with InvalidRequest and nothing is written', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [])
  const cases: object[] = [
    { chat_id: groupId },
    { chat_id: groupId, content: '   ' },
    { chat_id: 'abc', content: 'x' },
    { chat_id: groupId, content: 'x', extra: true },
    { chat_id: groupId, content: 'x', reply_to: '1', reaction_to: '2' },
    { chat_id: groupId, content: 7 },
  ]
  for (const body of cases) {
    const response = await chat.user(1).post('send_message', body)
    assert.equal(response.status, 400, JSON.stringify(body).slice(0, 80))
    assert.equal(response.error?.code, 1000)
  }
  // Too long is its own code (message-length.test.ts).
  const tooLong = await chat.user(1).post('send_message', { chat_id: groupId, content: 'x'.repeat(16_385) })
  assert.equal(tooLong.error?.code, 3021)
  const { messages } = await chat.user(1).read('get_chat_messages', { chat_id: groupId })
  assert.equal(messages.length, 0)
})

forEachDialect('requests without the gateway signature or identity are refused', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const unsigned = await fetch(`${chat.base}/msg/v1/get_chats`, { headers: { 'X-Crm': '1' } })
  assert.equal(unsigned.status, 401)
  const anonymous = await chat.call('GET', '/msg/v1/get_chats', {})
  assert.equal(anonymous.status, 401)
  assert.equal(anonymous.error?.code, 1008)
})

forEachDialect('only a content edit marks a message edited', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [])
  const sent = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'note' })
  assert.equal((await chat.user(1).ok('pin_message', { message_id: sent.id })).edited, false)
  assert.equal((await chat.user(1).ok('edit_message', { message_id: sent.id, content: 'note!' })).edited, true)
})

forEachDialect('a reaction sent with send_message must target a message of the named chat', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const first = await createGroup(chat.user(1), [2])
  const second = await createGroup(chat.user(1), [2])
  const target = await chat.user(1).ok('send_message', { chat_id: first, content: 'x' })
  const wrongChat = await chat.user(2).post('send_message', { chat_id: second, content: '👍', reaction_to: target.id })
  assert.equal(wrongChat.error?.code, 3001)
  const tooLong = await chat
    .user(2)
    .post('send_message', { chat_id: first, content: 'x'.repeat(33), reaction_to: target.id })
  assert.equal(tooLong.status, 400)
})

forEachDialect('an archived chat refuses pins and deletes too', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const sent = await chat.user(1).ok('send_message', { chat_id: direct.id, content: 'keep' })
  await chat.user(1).ok('archive_chat', { chat_id: direct.id })
  assert.equal((await chat.user(1).post('pin_message', { message_id: sent.id })).error?.code, 3004)
  assert.equal((await chat.user(1).post('soft_delete_message', { message_id: sent.id })).error?.code, 3004)
})

forEachDialect('widgets are not edited as text', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [])
  const sent = await chat.user(1).ok('send_message', { chat_id: groupId, content: '', widget: { kind: 'poll' } })
  assert.equal((await chat.user(1).post('edit_message', { message_id: sent.id, content: 'text' })).status, 400)
})

forEachDialect("deleting a chat's newest message moves last_message back", async (t, dialect) => {
  const chat = await startChat(t, dialect, { HardDelete: { Messages: true } })
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [])
  const older = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'older' })
  const newest = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'newest' })
  await chat.user(1).ok('hard_delete_message', { message_id: newest.id })
  assert.equal((await chat.user(1).read('get_chat_info', { chat_id: groupId })).last_message, older.id)
  await chat.user(1).ok('soft_delete_message', { message_id: older.id })
  assert.equal((await chat.user(1).read('get_chat_info', { chat_id: groupId })).last_message, '0')
})

forEachDialect('member id 0 is never a participant', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  assert.equal((await chat.user(1).post('create_private_chat', { peer: '0' })).status, 400)
  const groupId = await createGroup(chat.user(1), [])
  assert.equal((await chat.user(1).post('add_chat_member', { chat_id: groupId, member: '0' })).status, 400)
})
