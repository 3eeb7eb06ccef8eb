import assert from 'node:assert/strict'
import { RouteFlags } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startChat } from '../../../chat/test/support.ts'
import { SERVICE_SECRET, signedInUser, startGateway } from '../../test/support.ts'

forEachDialect('the real chat module accepts the gateway hop and sees the signed-in user', async (t, dialect) => {
  const chat = await startChat(t, dialect, { ServiceSecret: SERVICE_SECRET })
  const gateway = await startGateway(t, dialect, { settings: { Modules: { chat: chat.base } } })
  await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
  await gateway.store.routes.add({ prefix: '/', upstream: 'chat' })
  const user = await signedInUser(gateway)
  // A spoofed identity must not survive the gateway.
  const headers = { ...user.headers, 'X-Crm': '424242' }

  const created = await fetch(`${gateway.url}/msg/v1/create_chat`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ type: 2, name: 'Team', members: [] }),
  })
  assert.equal(created.status, 200, JSON.stringify(await created.clone().json()))
  const chatId = (await json(created)).result.chat.id
  const members = await json(await fetch(`${gateway.url}/msg/v1/get_chat_members?chat_id=${chatId}`, { headers }))
  assert.ok(
    JSON.stringify(members.result).includes(String(user.crmId)),
    'the chat is owned by the session user, not the spoofed X-Crm',
  )
  assert.ok(!JSON.stringify(members.result).includes('424242'))

  const events = await fetch(`${gateway.url}/private/v1/events`)
  assert.notEqual(events.status, 200, 'the module internal API is not reachable through the gateway')
  const direct = await fetch(`${chat.base}/msg/v1/get_unread_messages`, { headers: { 'X-Crm': String(user.crmId) } })
  assert.equal(direct.status, 401, 'without the gateway signature the module refuses')
})
