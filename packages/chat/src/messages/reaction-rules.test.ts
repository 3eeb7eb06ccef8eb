import assert from 'node:assert/strict'
import type { EventBatch } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { type ChatClient, createGroup, startChat } from '../../test/support.ts'

/** The event types `user` was sent after `since`, in feed order. */
async function eventTypes(chat: ChatClient, user: number, since: number): Promise<string[]> {
  const { status, result } = await chat.events({ subjects: `user:${user}`, since, limit: 1000 })
  assert.equal(status, 200)
  return (result as EventBatch).Events.map((event) => event.EventType)
}

async function lastTick(chat: ChatClient): Promise<number> {
  return ((await chat.events({ limit: 1000 })).result as EventBatch).LastTick
}

forEachDialect('an archived chat refuses reactions; nothing is stored or announced', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const target = await chat.user(1).ok('send_message', { chat_id: direct.id, content: 'done' })
  await chat.user(2).ok('toggle_message_reaction', { message_id: target.id, emoji: '👍' })
  await chat.user(1).ok('archive_chat', { chat_id: direct.id, archived: true })
  const archivedAt = await lastTick(chat)

  const attempts = [
    await chat.user(2).post('toggle_message_reaction', { message_id: target.id, emoji: '❤️' }),
    await chat.user(2).post('toggle_message_reaction', { message_id: target.id, emoji: '👍' }),
    await chat.user(2).post('send_message', { chat_id: direct.id, content: '🎉', reaction_to: target.id }),
  ]
  assert.deepEqual(
    attempts.map((attempt) => attempt.error?.code),
    [3004, 3004, 3004],
    'adding, removing and adding through send_message are all ChatArchived',
  )

  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: direct.id })
  assert.deepEqual(messages[0].reactions, [{ emoji: '👍', count: 1, mine: true }], 'the reactions before archiving')
  // Unarchiving is announced after the attempts: a ReactionChanged from them would come before it.
  await chat.user(1).ok('archive_chat', { chat_id: direct.id, archived: false })
  const after = await eventTypes(chat, 1, archivedAt)
  assert.ok(after.length > 0, 'the unarchiving is in the feed')
  assert.ok(!after.includes('ReactionChanged'), `no reaction was announced: ${after}`)
})

forEachDialect('adding a reaction one already has changes nothing and announces nothing', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2)
  const groupId = await createGroup(chat.user(1), [2])
  const target = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'Ship it' })
  const first = await chat.user(2).ok('send_message', { chat_id: groupId, content: '👍', reaction_to: target.id })
  assert.deepEqual(first.reactions, [{ emoji: '👍', count: 1, mine: true }])
  const before = await lastTick(chat)

  const again = await chat.user(2).ok('send_message', { chat_id: groupId, content: '👍', reaction_to: target.id })
  assert.deepEqual(again.reactions, [{ emoji: '👍', count: 1, mine: true }], 'the answer shows the reaction kept')
  // A later message is the barrier: an event from the second add would be in the feed before it.
  await chat.user(1).ok('send_message', { chat_id: groupId, content: 'after' })

  assert.deepEqual(await eventTypes(chat, 1, before), ['NewChatMessage'])
  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: groupId })
  assert.deepEqual(
    messages.map((message: { content: string; reactions: unknown }) => [message.content, message.reactions]),
    [
      ['after', []],
      ['Ship it', [{ emoji: '👍', count: 1, mine: true }]],
    ],
  )
})
