import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { createGroup, startChat } from '../../test/support.ts'

forEachDialect(
  'the gateway reads chat info and members and manages membership without being a member',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register(1, 2, 5)
    const groupId = await createGroup(chat.user(1), [2], 2, 'Ops')
    const info = await chat.call('GET', `/private/v1/get_chat_info?chat_id=${groupId}`, {})
    assert.equal(info.status, 200)
    assert.equal(info.result.name, 'Ops')
    assert.equal(info.result.member_count, 2)
    assert.equal((await chat.call('POST', '/private/v1/add_member', {}, { chat_id: groupId, member: '5' })).status, 200)
    const members = await chat.call('GET', `/private/v1/get_chat_members?chat_id=${groupId}`, {})
    assert.deepEqual(
      members.result.members.map((member: { member: string }) => member.member),
      ['1', '2', '5'],
    )
    const removed = await chat.call('POST', '/private/v1/remove_member', {}, { chat_id: groupId, member: '2' })
    assert.deepEqual(removed.result, { removed: true })
    const owner = await chat.call('POST', '/private/v1/remove_member', {}, { chat_id: groupId, member: '1' })
    assert.equal(owner.error?.code, 3002)
    const missing = await chat.call('GET', '/private/v1/get_chat_info?chat_id=123', {})
    assert.equal(missing.status, 404)
  },
)

forEachDialect('delete_message soft-deletes, and hard-deletes only when enabled', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 5)
  const groupId = await createGroup(chat.user(1), [])
  const sent = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'spam' })
  const soft = await chat.call('POST', '/private/v1/delete_message', {}, { message_id: sent.id })
  assert.deepEqual(soft.result, { message_id: sent.id, hard: false })
  assert.equal((await chat.user(1).read('get_chat_messages', { chat_id: groupId })).messages.length, 0)
  const hard = await chat.call('POST', '/private/v1/delete_message', {}, { message_id: sent.id, hard: true })
  assert.equal(hard.error?.code, 3006)
})

forEachDialect('internal operations refuse callers without the inter-service signature', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 5)
  const response = await fetch(`${chat.base}/private/v1/add_member`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chat_id: '1', member: '2' }),
  })
  assert.equal(response.status, 401)
})

forEachDialect('internal remove_member keeps private chats whole', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 5)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const response = await chat.call('POST', '/private/v1/remove_member', {}, { chat_id: direct.id, member: '2' })
  assert.equal(response.error?.code, 3005)
  await chat.user(2).ok('create_private_chat', { peer: '1' })
})
