import assert from 'node:assert/strict'
import { RouteFlags } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startChat } from '../../../chat/test/support.ts'
import { SERVICE_SECRET, startGateway } from '../../test/support.ts'

forEachDialect('the real chat module accepts the gateway hop and sees the signed-in user', async (t, dialect) => {
  const chat = await startChat(t, dialect, { ServiceSecret: SERVICE_SECRET })
  const gateway = await startGateway(t, dialect, { settings: { Modules: { chat: chat.base } } })
  await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
  await gateway.store.routes.add({ prefix: '/', upstream: 'chat' })
  const user = await gateway.store.users.create()
  const { token, session } = await gateway.store.sessions.create({
    crmId: user.crm_id,
    method: 'email_otp',
    ip: '127.0.0.1',
    userAgent: 'test',
  })
  const headers = {
    Cookie: `${gateway.config.Sessions.CookieName}=${token}`,
    'X-CSRF-Token': session.csrf,
    'Content-Type': 'application/json',
    // A spoofed identity must not survive the gateway.
    'X-Crm': '424242',
  }

  const created = await fetch(`${gateway.url}/msg/v1/create_chat`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ type: 2, name: 'Team', members: [] }),
  })
  assert.equal(created.status, 200, JSON.stringify(await created.clone().json()))
  const chatId = (await json(created)).result.chat.id
  const members = await json(await fetch(`${gateway.url}/msg/v1/get_chat_members?chat_id=${chatId}`, { headers }))
  assert.ok(
    JSON.stringify(members.result).includes(String(user.crm_id)),
    'the chat is owned by the session user, not the spoofed X-Crm',
  )
  assert.ok(!JSON.stringify(members.result).includes('424242'))

  const events = await fetch(`${gateway.url}/private/v1/events`)
  assert.notEqual(events.status, 200, 'the module internal API is not reachable through the gateway')
  const direct = await fetch(`${chat.base}/msg/v1/get_unread_messages`, { headers: { 'X-Crm': String(user.crm_id) } })
  assert.equal(direct.status, 401, 'without the gateway signature the module refuses')
})
