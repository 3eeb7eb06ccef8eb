import assert from 'node:assert/strict'
import { type EventBatch, MemberRole } from '@atrium/platform'
import { forEachDialect, until } from '@atrium/platform/testing'
import { createGroup, startChat } from '../../test/support.ts'

forEachDialect('a mute with an end covers what is sent before it and ends by itself', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2, 3])
  const bob = chat.user(2)
  const info = () => bob.read('get_chat_info', { chat_id: groupId })
  const ends = new Date(Date.now() + 3000).toISOString()
  const muted = await bob.ok('update_member', { chat_id: groupId, muted_until: ends })
  assert.equal(muted.role & MemberRole.Muted, MemberRole.Muted)
  assert.deepEqual([(await info()).muted, (await info()).muted_until], [true, ends])
  const { members } = await chat.user(1).read('get_chat_members', { chat_id: groupId })
  assert.equal(members.find((member: { member: string }) => member.member === '2').role, 0, 'his own business')

  const mutedItems = async (content: string) => {
    const { LastTick: since } = (await chat.events({})).result as EventBatch
    await chat.user(1).ok('send_message', { chat_id: groupId, content })
    const { Events } = (await chat.events({ since })).result as EventBatch
    return Events.filter((item) => item.EventType === 'NewChatMessage' && item.Muted).map((item) => item.CrmId)
  }
  assert.deepEqual(await mutedItems('during the mute'), [2])

  await until(async () => !(await info()).muted, 'the mute ended by itself')
  const after = await info()
  assert.equal(after.muted_until, '')
  assert.equal(after.role & MemberRole.Muted, 0)
  assert.deepEqual(await mutedItems('after the mute'), [])
  // A message of the mute read after its end still made no notification: the mute covers its time.
  const { Events } = (await chat.events({})).result as EventBatch
  const during = Events.find((item) => item.EventType === 'NewChatMessage' && item.CrmId === 2)
  assert.equal(during?.Muted, true)

  // `muted: true` mutes with no end; muted_until then gives it one; `muted: false` clears both.
  await bob.ok('update_member', { chat_id: groupId, muted: true })
  assert.deepEqual([(await info()).muted, (await info()).muted_until], [true, ''])
  const later = new Date(Date.now() + 3_600_000).toISOString()
  await bob.ok('update_member', { chat_id: groupId, muted: true, muted_until: later })
  assert.equal((await info()).muted_until, later)
  await bob.ok('update_member', { chat_id: groupId, muted: false })
  assert.deepEqual([(await info()).muted, (await info()).muted_until], [false, ''])
})

forEachDialect('a mute end is checked: a time in the past, too far, without a zone or unmuting', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2)
  const groupId = await createGroup(chat.user(1), [2])
  const bob = chat.user(2)
  const day = 86_400_000
  const refused = async (body: Record<string, unknown>, status = 400) => {
    const answer = await bob.post('update_member', { chat_id: groupId, ...body })
    assert.equal(answer.status, status, JSON.stringify(body))
    return answer.error?.message as string
  }
  assert.match(await refused({ muted_until: new Date(Date.now() - 1000).toISOString() }), /has passed/)
  assert.match(await refused({ muted_until: new Date(Date.now() + 367 * day).toISOString() }), /366 days/)
  assert.match(await refused({ muted_until: '2099-01-01T10:00:00' }), /with its zone/)
  assert.match(await refused({ muted_until: 'tomorrow' }), /ISO 8601/)
  assert.match(await refused({ muted_until: '2099-02-30T10:00:00Z' }), /ISO 8601/)
  const soon = new Date(Date.now() + 3_600_000).toISOString()
  assert.match(await refused({ muted: false, muted_until: soon }), /without muted/)
  assert.match(
    await chat
      .user(1)
      .post('update_member', { chat_id: groupId, member: '2', muted_until: soon })
      .then((answer) => {
        assert.equal(answer.status, 403)
        return answer.error?.message ?? ''
      }),
    /for themselves/,
  )
  // Within the bounds: a year ahead is allowed; nothing refused above was written.
  const info = await bob.read('get_chat_info', { chat_id: groupId })
  assert.deepEqual([info.muted, info.muted_until], [false, ''])
  const yearAhead = new Date(Date.now() + 365 * day).toISOString()
  await bob.ok('update_member', { chat_id: groupId, muted_until: yearAhead })
  assert.equal((await bob.read('get_chat_info', { chat_id: groupId })).muted_until, yearAhead)
})

forEachDialect('leaving a chat tells the others neither the leaver’s nor the heir’s list state', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2, 3])
  await chat.user(1).ok('update_member', { chat_id: groupId, pinned: true, muted: true })
  await chat.user(2).ok('update_member', { chat_id: groupId, hidden: true })
  const { LastTick: since } = (await chat.events({})).result as EventBatch
  await chat.user(1).ok('leave_chat', { chat_id: groupId })
  const { Events } = (await chat.events({ since })).result as EventBatch
  const seen = (crmId: number) =>
    Events.filter((item) => item.CrmId === crmId && item.EventType.startsWith('Member')).map((item) => [
      item.EventType,
      item.Data.member,
      item.Data.role,
    ])
  // Bob, the oldest member, is the heir.
  assert.deepEqual(seen(3), [
    ['MemberUpdated', '2', MemberRole.Owner],
    ['MemberRemoved', '1', MemberRole.Owner],
  ])
  assert.deepEqual(seen(1), [['MemberRemoved', '1', MemberRole.Owner | MemberRole.Pinned | MemberRole.Muted]])
})
