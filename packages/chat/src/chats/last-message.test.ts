import assert from 'node:assert/strict'
import { ChatMessFlags, signFileToken } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { type ChatCaller, createGroup, SERVICE_SECRET, startChat } from '../../test/support.ts'

interface Preview {
  id: string
  sender: string
  sender_name: string
  content: string
  file_name: string
  flags: number
  edited: boolean
  time: string
}

async function previews(caller: ChatCaller): Promise<Map<string, Preview | null>> {
  const { chats } = await caller.read('get_chats')
  return new Map(
    chats.map((chat: { id: string; last_message_preview: Preview | null }) => [chat.id, chat.last_message_preview]),
  )
}

forEachDialect(
  "get_chats and get_chat_info carry each chat's newest message with its sender's name",
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 3, 4)
    await chat.user(2).ok('update_profile', { name: 'Bob' })
    const groupId = await createGroup(chat.user(1), [2, 3])
    const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '3' })
    const { chat: empty } = await chat.user(1).ok('create_private_chat', { peer: '4' })
    await chat.user(1).ok('send_message', { chat_id: groupId, content: 'older' })
    const newest = await chat.user(2).ok('send_message', { chat_id: groupId, content: `Hello ${'x'.repeat(300)}` })
    const token = signFileToken(SERVICE_SECRET, {
      id: 9001,
      owner: 1,
      name: 'plan.pdf',
      size: 10,
      type: 'application/pdf',
      expires: Date.now() + 60_000,
    })
    const file = await chat.user(1).ok('send_message', { chat_id: direct.id, content: '', file: token })

    const list = await previews(chat.user(1))
    assert.deepEqual(list.get(groupId), {
      id: newest.id,
      sender: '2',
      sender_name: 'Bob',
      content: `Hello ${'x'.repeat(194)}`,
      file_name: '',
      flags: 0,
      edited: false,
      time: newest.time,
    })
    assert.deepEqual(list.get(direct.id), {
      id: file.id,
      sender: '1',
      sender_name: '',
      content: '',
      file_name: 'plan.pdf',
      flags: ChatMessFlags.File,
      edited: false,
      time: file.time,
    })
    assert.equal(list.get(empty.id), null, 'a chat without messages has no preview')
    const info = await chat.user(3).read('get_chat_info', { chat_id: groupId })
    assert.deepEqual(info.last_message_preview, list.get(groupId), 'get_chat_info says the same')
  },
)

forEachDialect(
  'an edit shows in the preview; a deleted newest message gives way to the one before',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 3, 4)
    const groupId = await createGroup(chat.user(1), [2])
    const first = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'first' })
    const second = await chat.user(2).ok('send_message', { chat_id: groupId, content: 'second' })
    await chat.user(2).ok('toggle_message_reaction', { message_id: first.id, emoji: '👍' })
    assert.equal((await previews(chat.user(1))).get(groupId)?.id, second.id, 'a reaction is not a message of the list')

    await chat.user(2).ok('edit_message', { message_id: second.id, content: 'second, edited' })
    const edited = (await previews(chat.user(1))).get(groupId)
    assert.equal(edited?.content, 'second, edited')
    assert.equal(edited?.edited, true)

    // Deleted messages leave the conversation (docs/web-client.md), so they leave the preview too.
    await chat.user(2).ok('soft_delete_message', { message_id: second.id })
    const after = (await previews(chat.user(1))).get(groupId)
    assert.equal(after?.id, first.id)
    assert.equal(after?.content, 'first')
    await chat.user(1).ok('soft_delete_message', { message_id: first.id })
    assert.equal((await previews(chat.user(1))).get(groupId), null)
  },
)

forEachDialect(
  'in a long list each chat view is what get_chat_info says of that chat, preview, counts and unread included',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    const chats = 30
    await chat.register(1, 102, ...Array.from({ length: chats }, (_, index) => 100 + index))
    for (let peer = 100; peer < 100 + chats; peer++) {
      const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: String(peer) })
      await chat.user(peer).ok('send_message', { chat_id: direct.id, content: `from ${peer}` })
    }
    const groupId = await createGroup(chat.user(101), [1, 102])
    await chat.user(102).ok('send_message', { chat_id: groupId, content: 'in the group' })
    await chat.user(1).ok('send_message', { chat_id: groupId, content: 'mine, not unread' })
    await chat.user(102).ok('send_message', { chat_id: groupId, content: 'unread again' })
    const gone = await chat.user(102).ok('send_message', { chat_id: groupId, content: 'taken back' })
    await chat.user(102).ok('soft_delete_message', { message_id: gone.id })
    // The list reads counts, unread numbers and names for all chats at once; each view must be what
    // get_chat_info says of that chat alone.
    const { chats: views } = await chat.user(1).read('get_chats')
    assert.equal(views.length, chats + 1)
    for (const view of views) {
      assert.deepEqual(view, await chat.user(1).read('get_chat_info', { chat_id: view.id }), `chat ${view.id}`)
    }
    const group = views.find((view: { id: string }) => view.id === groupId)
    assert.equal(group.member_count, 3)
    assert.equal(group.unread, 1, 'only the message after my own; a deleted one does not count')
    assert.equal(group.last_message_preview.content, 'unread again')
    assert.ok(views.every((view: { unread: number }) => view.unread === 1))
    const list = await previews(chat.user(1))
    list.delete(groupId)
    assert.equal(list.size, chats)
    assert.deepEqual(
      [...list.values()].map((preview) => preview?.content).sort(),
      Array.from({ length: chats }, (_, index) => `from ${100 + index}`).sort(),
    )
  },
)
