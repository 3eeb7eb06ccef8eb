import assert from 'node:assert/strict'
import { ChatType, MemberRole } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { createGroup, startChat } from '../../test/support.ts'

forEachDialect(
  'create_private_chat returns the same chat for the same pair, also under concurrent calls',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 3)
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => chat.user(1).post('create_private_chat', { peer: '2' })),
      ...Array.from({ length: 5 }, () => chat.user(2).post('create_private_chat', { peer: '1' })),
    ])
    assert.ok(results.every((response) => response.status === 200))
    const ids = new Set(results.map((response) => response.result.chat.id))
    assert.equal(ids.size, 1)
    assert.equal(results.filter((response) => response.result.created).length, 1)
    const fromAlice = results[0]!.result.chat
    assert.equal(fromAlice.type, ChatType.Private)
    assert.equal(fromAlice.peer, '2')
    assert.equal(fromAlice.name, 'User 2', 'a private chat is named after the other participant (no display name yet)')
    assert.equal(results[9]!.result.chat.peer, '1')
    assert.equal(fromAlice.member_count, 2)
  },
)

forEachDialect('a private chat with oneself is refused', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const response = await chat.user(1).post('create_private_chat', { peer: '1' })
  assert.equal(response.status, 400)
  assert.equal(response.error?.code, 1000)
})

forEachDialect('create_chat makes groups and channels with the creator as owner', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const { chat: group, created } = await chat.user(1).ok('create_chat', { type: 2, name: 'Team', members: ['2', '3'] })
  assert.equal(created, true)
  assert.equal(group.name, 'Team')
  assert.equal(group.member_count, 3)
  assert.equal(group.role & MemberRole.Owner, MemberRole.Owner)
  const info = await chat.user(2).read('get_chat_info', { chat_id: group.id })
  assert.equal(info.role, 0)
  assert.equal(info.owner, '1')
  const missingName = await chat.user(1).post('create_chat', { type: 4 })
  assert.equal(missingName.status, 400)
  const badType = await chat.user(1).post('create_chat', { type: 3, name: 'x' })
  assert.equal(badType.error?.code, 1000)
})

forEachDialect('non-members cannot see a chat', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  const response = await chat.user(3).get('get_chat_info', { chat_id: groupId })
  assert.equal(response.status, 404)
  assert.equal(response.error?.code, 3000)
})

forEachDialect('update_chat follows the patch rule and only admins may use it', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  await chat.user(1).ok('update_chat', { chat_id: groupId, description: 'daily sync' })
  const renamed = await chat.user(1).ok('update_chat', { chat_id: groupId, name: 'Core', description: null })
  assert.equal(renamed.name, 'Core')
  assert.equal(renamed.description, 'daily sync', 'null keeps the stored value')
  const refused = await chat.user(2).post('update_chat', { chat_id: groupId, name: 'Mine' })
  assert.equal(refused.status, 403)
  assert.equal(refused.error?.code, 3002)
})

forEachDialect('an archived private chat is read-only until unarchived', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const archived = await chat.user(2).ok('archive_chat', { chat_id: direct.id })
  assert.equal(archived.archived, true)
  const send = await chat.user(1).post('send_message', { chat_id: direct.id, content: 'hello?' })
  assert.equal(send.status, 409)
  assert.equal(send.error?.code, 3004)
  await chat.user(1).ok('archive_chat', { chat_id: direct.id, archived: false })
  await chat.user(1).ok('send_message', { chat_id: direct.id, content: 'hello again' })
  const group = await chat.user(1).post('archive_chat', { chat_id: await createGroup(chat.user(1), [2]) })
  assert.equal(group.error?.code, 3005)
})

forEachDialect('an owner who leaves hands the group to the oldest admin', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2, 3])
  await chat.user(1).ok('update_member', { chat_id: groupId, member: '3', admin: true })
  await chat.user(1).ok('leave_chat', { chat_id: groupId })
  const info = await chat.user(3).read('get_chat_info', { chat_id: groupId })
  assert.equal(info.owner, '3')
  assert.equal(info.role & MemberRole.Owner, MemberRole.Owner)
  assert.equal(info.member_count, 2)
  assert.equal((await chat.user(1).get('get_chat_info', { chat_id: groupId })).status, 404)
})

forEachDialect('get_chats lists pinned chats first and leaves hidden ones out', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const first = await createGroup(chat.user(1), [], 2, 'First')
  const second = await createGroup(chat.user(1), [], 2, 'Second')
  const third = await createGroup(chat.user(1), [], 2, 'Third')
  await chat.user(1).ok('update_member', { chat_id: first, pinned: true })
  await chat.user(1).ok('update_member', { chat_id: second, hidden: true })
  const { chats } = await chat.user(1).read('get_chats')
  assert.deepEqual(
    chats.map((item: { name: string }) => item.name),
    ['First', 'Third'],
  )
  const all = await chat.user(1).read('get_chats', { include_hidden: true })
  assert.equal(all.chats.length, 3)
  assert.ok(third)
})

forEachDialect(
  'get_chats gives the tick it read up to: the list holds every event up to it, a stream since it gets the rest',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2)
    const groupId = await createGroup(chat.user(1), [2])
    await chat.user(1).ok('send_message', { chat_id: groupId, content: 'before the list' })
    const listed = await chat.user(2).read('get_chats')
    assert.ok(Number.isSafeInteger(listed.tick) && listed.tick > 0)
    assert.equal(listed.chats[0].unread, 1)
    const { result: upTo } = await chat.events({ subjects: 'user:2' })
    assert.equal(upTo.LastTick, listed.tick, 'every event so far is at or below the tick')
    assert.deepEqual((await chat.events({ subjects: 'user:2', since: listed.tick })).result.Events, [])

    const sent = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'after the list' })
    const after = (await chat.events({ subjects: 'user:2', since: listed.tick })).result.Events
    assert.deepEqual(
      after.map((event: { EventType: string; Data: { message_id?: string } }) => [
        event.EventType,
        event.Data.message_id,
      ]),
      [['NewChatMessage', sent.id]],
    )
  },
)

forEachDialect('hard_delete_chat is refused unless enabled, then removes the group', async (t, dialect) => {
  const disabled = await startChat(t, dialect)
  await disabled.register(1, 2, 3)
  const groupId = await createGroup(disabled.user(1), [2])
  const refused = await disabled.user(1).post('hard_delete_chat', { chat_id: groupId })
  assert.equal(refused.status, 403)
  assert.equal(refused.error?.code, 3006)

  const chat = await startChat(t, dialect, { HardDelete: { Chats: true } })
  await chat.register(1, 2, 3)
  const doomed = await createGroup(chat.user(1), [2])
  await chat.user(2).ok('send_message', { chat_id: doomed, content: 'bye' })
  const byMember = await chat.user(2).post('hard_delete_chat', { chat_id: doomed })
  assert.equal(byMember.status, 403)
  await chat.user(1).ok('hard_delete_chat', { chat_id: doomed })
  assert.equal((await chat.user(1).get('get_chat_messages', { chat_id: doomed })).status, 404)
})

forEachDialect("a private chat is named after the other participant's profile", async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  await chat.user(1).ok('update_profile', { name: 'Alice' })
  const named = await chat.call('POST', '/private/v1/set_profile', {}, { member: '2', name: 'Bob Builder' })
  assert.equal(named.status, 200)
  const { chat: fromAlice } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  assert.equal(fromAlice.name, 'Bob Builder')
  const fromBob = await chat.user(2).read('get_chat_info', { chat_id: fromAlice.id })
  assert.equal(fromBob.name, 'Alice')
  const { chats } = await chat.user(2).read('get_chats')
  assert.equal(chats[0].name, 'Alice')
  const badName = await chat.user(1).post('update_profile', { name: 'evil\nname' })
  assert.equal(badName.status, 400)
})

forEachDialect('the new owner is announced when the owner leaves', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  const { result: before } = await chat.events({ subjects: 'user:2' })
  await chat.user(1).ok('leave_chat', { chat_id: groupId })
  const { result } = await chat.events({ subjects: 'user:2', since: before.LastTick })
  const updated = result.Events.find((event: { EventType: string }) => event.EventType === 'MemberUpdated')
  assert.equal(updated.Data.member, '2')
  assert.equal(updated.Data.role & MemberRole.Owner, MemberRole.Owner)
  const removed = result.Events.find((event: { EventType: string }) => event.EventType === 'MemberRemoved')
  assert.equal(removed.Data.role, MemberRole.Owner)
})

forEachDialect('a blank profile name is refused', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  assert.equal((await chat.user(1).post('update_profile', { name: '   ' })).status, 400)
})
