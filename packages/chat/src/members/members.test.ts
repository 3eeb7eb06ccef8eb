import assert from 'node:assert/strict'
import { type EventBatch, MemberRole } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { createGroup, startChat } from '../../test/support.ts'

forEachDialect('admins add and remove members; plain members cannot', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  const refused = await chat.user(2).post('add_chat_member', { chat_id: groupId, member: '3' })
  assert.equal(refused.status, 403)
  assert.equal(refused.error?.code, 3002)
  const added = await chat.user(1).ok('add_chat_member', { chat_id: groupId, member: '3' })
  assert.equal(added.member, '3')
  const again = await chat.user(1).ok('add_chat_member', { chat_id: groupId, member: '3' })
  assert.equal(again.joined, added.joined, 'adding twice keeps the first membership')
  assert.equal((await chat.user(2).post('remove_member', { chat_id: groupId, member: '3' })).status, 403)
  await chat.user(1).ok('remove_member', { chat_id: groupId, member: '3' })
  const { members, member_count } = await chat.user(1).read('get_chat_members', { chat_id: groupId })
  assert.deepEqual(
    members.map((member: { member: string }) => member.member),
    ['1', '2'],
  )
  assert.equal(member_count, 2)
})

forEachDialect('the owner cannot be removed and only the owner removes admins', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2, 3])
  await chat.user(1).ok('update_member', { chat_id: groupId, member: '2', admin: true })
  await chat.user(1).ok('update_member', { chat_id: groupId, member: '3', admin: true })
  assert.equal((await chat.user(2).post('remove_member', { chat_id: groupId, member: '1' })).error?.code, 3002)
  assert.equal((await chat.user(2).post('remove_member', { chat_id: groupId, member: '3' })).error?.code, 3002)
  await chat.user(1).ok('remove_member', { chat_id: groupId, member: '3' })
  const demote = await chat.user(2).post('update_member', { chat_id: groupId, member: '1', admin: false })
  assert.equal(demote.error?.code, 3002)
})

forEachDialect('pinned and hidden are per member; null and omitted keep them', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  const pinned = await chat.user(2).ok('update_member', { chat_id: groupId, pinned: true })
  assert.equal(pinned.role & MemberRole.Pinned, MemberRole.Pinned)
  const kept = await chat.user(2).ok('update_member', { chat_id: groupId, pinned: null, hidden: true })
  assert.equal(kept.role, MemberRole.Pinned | MemberRole.Hidden)
  const forOther = await chat.user(1).post('update_member', { chat_id: groupId, member: '2', hidden: false })
  assert.equal(forOther.status, 403)
  const owner = await chat.user(1).read('get_chat_info', { chat_id: groupId })
  assert.equal(owner.pinned, false, "another member's pin does not change the owner's list")
})

forEachDialect(
  'a member mutes a chat for themselves: their events say Muted, and no one else sees it',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 3)
    const groupId = await createGroup(chat.user(1), [2, 3])
    const muted = await chat.user(2).ok('update_member', { chat_id: groupId, muted: true })
    assert.equal(muted.role & MemberRole.Muted, MemberRole.Muted)
    assert.equal((await chat.user(2).read('get_chat_info', { chat_id: groupId })).muted, true)
    assert.equal((await chat.user(1).read('get_chat_info', { chat_id: groupId })).muted, false)
    const forOther = await chat.user(1).post('update_member', { chat_id: groupId, member: '3', muted: true })
    assert.equal(forOther.status, 403)

    // Another member's view of the list leaves out Bob's list state; his own shows it.
    await chat.user(2).ok('update_member', { chat_id: groupId, pinned: true })
    const roleSeenBy = async (viewer: number) => {
      const { members } = await chat.user(viewer).read('get_chat_members', { chat_id: groupId })
      return members.find((member: { member: string }) => member.member === '2').role
    }
    assert.equal(await roleSeenBy(1), 0)
    assert.equal(await roleSeenBy(2), MemberRole.Muted | MemberRole.Pinned)
    // Adding him again answers his membership, as the adder sees it.
    assert.equal((await chat.user(1).ok('add_chat_member', { chat_id: groupId, member: '2' })).role, 0)
    // So does the event of a change everyone is told of (an admin granted).
    const { LastTick: before } = (await chat.events({ subjects: 'user:3' })).result as EventBatch
    await chat.user(1).ok('update_member', { chat_id: groupId, member: '2', admin: true })
    const told = (await chat.events({ subjects: 'user:3', since: before })).result as EventBatch
    assert.deepEqual(
      told.Events.map((item) => [item.EventType, item.Data.role]),
      [['MemberUpdated', MemberRole.Admin]],
    )

    // A message's items: Bob's says Muted, the others' do not; after unmuting, his does not either.
    const items = async (content: string) => {
      const { LastTick: since } = (await chat.events({})).result as EventBatch
      await chat.user(1).ok('send_message', { chat_id: groupId, content })
      const { Events } = (await chat.events({ since })).result as EventBatch
      return Events.filter((item) => item.EventType === 'NewChatMessage').map((item) => [item.CrmId, item.Muted])
    }
    assert.deepEqual(await items('while muted'), [
      [1, undefined],
      [2, true],
      [3, undefined],
    ])
    await chat.user(2).ok('update_member', { chat_id: groupId, muted: false })
    assert.deepEqual(await items('after unmuting'), [
      [1, undefined],
      [2, undefined],
      [3, undefined],
    ])
  },
)

forEachDialect('private chats keep exactly their two participants', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  assert.equal((await chat.user(1).post('add_chat_member', { chat_id: direct.id, member: '3' })).error?.code, 3005)
  assert.equal((await chat.user(1).post('leave_chat', { chat_id: direct.id })).error?.code, 3005)
})

forEachDialect('an admin cannot demote another admin, only step down', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2, 3])
  await chat.user(1).ok('update_member', { chat_id: groupId, member: '2', admin: true })
  await chat.user(1).ok('update_member', { chat_id: groupId, member: '3', admin: true })
  assert.equal(
    (await chat.user(2).post('update_member', { chat_id: groupId, member: '3', admin: false })).error?.code,
    3002,
  )
  assert.equal((await chat.user(2).ok('update_member', { chat_id: groupId, admin: false })).admin, false)
})

forEachDialect(
  'pinning and hiding a chat is announced to that member alone; an admin change to all',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 3)
    const groupId = await createGroup(chat.user(1), [2, 3])
    const since = ((await chat.events({ limit: 1000 })).result as EventBatch).LastTick
    const seenBy = async (user: number) => {
      const { result } = await chat.events({ subjects: `user:${user}`, since, limit: 1000 })
      return (result as EventBatch).Events.map(
        (event) => `${event.EventType} ${event.Data.member ?? event.Data.content}`,
      )
    }

    await chat.user(2).ok('update_member', { chat_id: groupId, pinned: true })
    await chat.user(2).ok('update_member', { chat_id: groupId, hidden: true })
    await chat.user(1).ok('update_member', { chat_id: groupId, member: '3', admin: true })
    // A message to everyone closes the run: whatever the others were sent comes before it.
    await chat.user(1).ok('send_message', { chat_id: groupId, content: 'barrier' })

    assert.deepEqual(await seenBy(2), [
      'MemberUpdated 2',
      'MemberUpdated 2',
      'MemberUpdated 3',
      'NewChatMessage barrier',
    ])
    for (const other of [1, 3]) {
      assert.deepEqual(await seenBy(other), ['MemberUpdated 3', 'NewChatMessage barrier'], `user ${other}`)
    }
  },
)
