import assert from 'node:assert/strict'
import { ChatType } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { createGroup, startChat } from '../../test/support.ts'

const DEVICE_A = 'device-aaaa-1111'
const DEVICE_B = 'device-bbbb-2222'

forEachDialect('the same code on the same device returns the same guest conversation', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 9)
  const invite = await chat.user(1).ok('create_invite', { kind: 'personal' })
  assert.equal(invite.path, `/chat?code=${invite.code}`)
  const join = () => chat.guest(invite.code, DEVICE_A).ok('join_invite', { code: invite.code })
  const [first, ...again] = await Promise.all([join(), join(), join()])
  for (const other of again) {
    assert.equal(other.member, first.member)
    assert.equal(other.chat.id, first.chat.id)
  }
  assert.equal(first.guest, true)
  assert.equal(first.calls_allowed, true, 'calls are allowed on personal invites')
  assert.equal(first.chat.type, ChatType.Private)
  assert.equal(first.chat.peer, '1')
  const later = await join()
  assert.equal(later.chat.id, first.chat.id)
  const otherDevice = await chat.guest(invite.code, DEVICE_B).ok('join_invite', { code: invite.code })
  assert.notEqual(otherDevice.member, first.member)
  assert.notEqual(otherDevice.chat.id, first.chat.id)
  const { chats } = await chat.user(1).read('get_chats')
  assert.equal(chats.length, 2, 'the inviter has one conversation per guest device')
})

forEachDialect(
  'a guest sends text and the inviter reads it; the guest receives events by its code subject',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 9)
    const invite = await chat.user(1).ok('create_invite', { kind: 'personal' })
    const guest = chat.guest(invite.code, DEVICE_A)
    const joined = await guest.ok('join_invite', { code: invite.code })
    await guest.ok('send_message', { chat_id: joined.chat.id, content: 'Hi, I need help' })
    await chat.user(1).ok('send_message', { chat_id: joined.chat.id, content: 'How can I help?' })
    const { messages } = await chat.user(1).read('get_chat_messages', { chat_id: joined.chat.id })
    assert.deepEqual(
      messages.map((message: { owner: string; content: string }) => [message.owner, message.content]),
      [
        ['1', 'How can I help?'],
        [joined.member, 'Hi, I need help'],
      ],
    )
    const { result } = await chat.events({ subjects: `code:${joined.member}` })
    const contents = result.Events.filter((e: { EventType: string }) => e.EventType === 'NewChatMessage').map(
      (e: { Data: { content: string } }) => e.Data.content,
    )
    assert.deepEqual(contents, ['Hi, I need help', 'How can I help?'])
  },
)

forEachDialect(
  'the code subject of a revoked invite’s guest reads no events, not even a waiting long-poll',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1)
    const invite = await chat.user(1).ok('create_invite', { kind: 'personal' })
    const joined = await chat.guest(invite.code, DEVICE_A).ok('join_invite', { code: invite.code })
    const subjects = `code:${joined.member}`
    await chat.user(1).ok('send_message', { chat_id: joined.chat.id, content: 'before' })
    const before = (await chat.events({ subjects })).result
    assert.deepEqual(
      before.Events.filter((e: { EventType: string }) => e.EventType === 'NewChatMessage').map(
        (e: { Data: { content: string } }) => e.Data.content,
      ),
      ['before'],
    )

    // A long-poll that began while the invite stood reads again after each commit: the revocation counts at once.
    const waiting = chat.events({ subjects, since: before.LastTick, wait: 1500 })
    await chat.user(1).ok('revoke_invite', { code: invite.code })
    await chat.user(1).ok('send_message', { chat_id: joined.chat.id, content: 'after' })
    const [waited, later] = [await waiting, await chat.events({ subjects, since: before.LastTick })]
    for (const { status, result } of [waited, later]) {
      assert.equal(status, 200)
      assert.ok(!JSON.stringify(result.Events).includes('after'), JSON.stringify(result.Events))
    }
    const owner = (await chat.events({ subjects: 'user:1', since: before.LastTick })).result
    assert.ok(JSON.stringify(owner.Events).includes('after'), 'the member still reads the chat')
  },
)

forEachDialect('guests cannot create chats or invites, browse files, or reach other chats', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 9)
  const invite = await chat.user(1).ok('create_invite', { kind: 'personal' })
  const guest = chat.guest(invite.code, DEVICE_A)
  await guest.ok('join_invite', { code: invite.code })
  const joined = await guest.ok('join_invite', { code: invite.code })
  for (const [operation, body] of [
    ['create_chat', { type: 2, name: 'mine' }],
    ['create_private_chat', { peer: '1' }],
    ['create_invite', { kind: 'personal' }],
  ] as const) {
    const response = await guest.post(operation, body)
    assert.equal(response.status, 403, operation)
    assert.equal(response.error?.code, 3007)
  }
  assert.equal((await guest.get('get_chat_files', { chat_id: joined.chat.id })).error?.code, 3007)
  const privateGroup = await createGroup(chat.user(1), [2])
  assert.equal((await guest.get('get_chat_messages', { chat_id: privateGroup })).status, 404)
})

forEachDialect('an unknown device or code is not a guest', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 9)
  const invite = await chat.user(1).ok('create_invite', { kind: 'personal' })
  await chat.guest(invite.code, DEVICE_A).ok('join_invite', { code: invite.code })
  const strangerDevice = await chat.guest(invite.code, DEVICE_B).get('get_chats')
  assert.equal(strangerDevice.status, 401)
  const wrongCode = await chat.guest('NoSuchCode123', DEVICE_A).get('get_chats')
  assert.equal(wrongCode.status, 401)
  const noDevice = await chat.call('POST', '/msg/v1/join_invite', {}, { code: invite.code })
  assert.equal(noDevice.status, 400)
  const badDevice = await chat.guest(invite.code, 'x').post('join_invite', { code: invite.code })
  assert.equal(badDevice.status, 400)
})

forEachDialect(
  'a group invite adds guests and users to the group; calls stay off for its guests',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 9)
    const groupId = await createGroup(chat.user(1), [2])
    assert.equal((await chat.user(2).post('create_invite', { kind: 'group', chat_id: groupId })).error?.code, 3002)
    const invite = await chat.user(1).ok('create_invite', { kind: 'group', chat_id: groupId })
    const guest = await chat.guest(invite.code, DEVICE_A).ok('join_invite', { code: invite.code })
    assert.equal(guest.chat.id, groupId)
    assert.equal(guest.calls_allowed, false)
    const user = await chat.user(9).ok('join_invite', { code: invite.code })
    assert.equal(user.guest, false)
    assert.equal(user.chat.member_count, 4)
  },
)

forEachDialect(
  'a revoked invite no longer admits anyone, and only its creator or an admin revokes it',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 9)
    const invite = await chat.user(1).ok('create_invite', { kind: 'personal' })
    assert.equal((await chat.user(2).post('revoke_invite', { code: invite.code })).status, 403)
    await chat.user(1).ok('revoke_invite', { code: invite.code })
    const join = await chat.guest(invite.code, DEVICE_A).post('join_invite', { code: invite.code })
    assert.equal(join.status, 404)
    assert.equal(join.error?.code, 3008)
  },
)

forEachDialect('revoking an invite also shuts out the guests who joined with it', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 9)
  const invite = await chat.user(1).ok('create_invite', { kind: 'personal' })
  const guest = chat.guest(invite.code, DEVICE_A)
  const joined = await guest.ok('join_invite', { code: invite.code })
  await chat.user(1).ok('revoke_invite', { code: invite.code })
  const after = await guest.post('send_message', { chat_id: joined.chat.id, content: 'still here?' })
  assert.equal(after.status, 401)
})

forEachDialect('a guest who left a group comes back through the same invite', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 9)
  const groupId = await createGroup(chat.user(1), [])
  const invite = await chat.user(1).ok('create_invite', { kind: 'group', chat_id: groupId })
  const guest = chat.guest(invite.code, DEVICE_A)
  const first = await guest.ok('join_invite', { code: invite.code })
  await guest.ok('leave_chat', { chat_id: groupId })
  const again = await guest.ok('join_invite', { code: invite.code })
  assert.equal(again.member, first.member)
  assert.equal(again.chat.member_count, 2)
})
