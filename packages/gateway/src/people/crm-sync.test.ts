import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { ContactFlags, type DatabaseDialect } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, json, listenRestartable, until } from '@atrium/platform/testing'
import { SERVICE_SECRET, startChat } from '../../../chat/test/support.ts'
import { loadCrmConfig } from '../../../reference/src/config.ts'
import { buildCrm } from '../../../reference/src/crm/app.ts'
import { createCrmClient, startCrm } from '../../../reference/test/crm.ts'
import { startGateway } from '../../test/support.ts'
import { ContactKind } from '../users/users.repository.ts'

/** A gateway pushing to both the chat module and the reference CRM, with `/crm/` routed as `npm start` does. */
async function startCrmWorld(t: TestContext, dialect: DatabaseDialect) {
  // After-hooks run in the order they were added: the gateway and its syncs stop before the modules.
  let stopGateway = async () => {}
  t.after(() => stopGateway())
  const chat = await startChat(t, dialect)
  const crm = await startCrm(t, dialect, undefined, SERVICE_SECRET)
  const gateway = await startGateway(t, dialect, {
    settings: {
      ServiceSecret: SERVICE_SECRET,
      Modules: { chat: chat.base, crm: crm.base },
      Proxy: { Routes: [{ Prefix: '/crm/', Upstream: 'crm', Flags: ['RequireSession'] }] },
    },
  })
  stopGateway = () => gateway.app.close()

  /** A session for a user of the gateway, and GET /crm/v1/user_info through the proxy with it. */
  async function sessionOf(crmId: number) {
    const { token } = await gateway.store.sessions.create({
      crmId,
      method: 'email_otp',
      ip: '127.0.0.1',
      userAgent: 'test',
    })
    const cookie = `${gateway.config.Sessions.CookieName}=${token}`
    return {
      async userInfo(query = '', headers: Record<string, string> = {}) {
        const response = await fetch(`${gateway.url}/crm/v1/user_info${query}`, { headers: { cookie, ...headers } })
        return { status: response.status, ...(await json(response)) }
      },
    }
  }
  return { ...gateway, chat, crm, sessionOf }
}

forEachDialect(
  'a user created and renamed at the gateway appears in user_info through the proxy',
  async (t, dialect) => {
    const world = await startCrmWorld(t, dialect)
    const { user: alice } = await world.store.users.userForContact(
      ContactKind.Email,
      'alice@example.com',
      ContactFlags.Verified,
    )
    const session = await world.sessionOf(alice.crm_id)
    const expected = {
      crm_id: String(alice.crm_id),
      name: `User ${String(alice.crm_id).slice(-4)}`,
      contacts: [{ kind: 'email', value: 'alice@example.com', verified: true }],
      created: new Date(alice.created).toISOString(),
    }
    let info: { status: number; result?: unknown } = { status: 0 }
    await until(async () => {
      info = await session.userInfo()
      return info.status === 200
    }, 'the new user pushed to the CRM')
    assert.deepEqual(info.result, expected)

    await world.store.users.setName(alice.crm_id, 'Alice Archer')
    await until(
      async () => ((await session.userInfo()).result as { name?: string } | undefined)?.name === 'Alice Archer',
      'the new name in the CRM',
    )
    assert.deepEqual((await session.userInfo(`?crm_id=${alice.crm_id}`)).result, { ...expected, name: 'Alice Archer' })

    // The chat module got the same people, and each module has its own cursor.
    const bob = await world.store.users.create({ name: 'Bob' })
    await until(async () => {
      const pair = await world.chat.user(bob.crm_id).post('create_private_chat', { peer: String(alice.crm_id) })
      return pair.status === 200 && pair.result.chat.name === 'Alice Archer'
    }, 'Alice known by name in the chat module')
    const cursors = await world.store.db.selectFrom('event_cursors').select('module').execute()
    assert.deepEqual(
      cursors
        .map((row) => row.module)
        .filter((key) => key.startsWith('profiles:'))
        .sort(),
      ['profiles:chat', 'profiles:crm'],
    )
  },
)

forEachDialect('contacts reach the CRM with the gateway’s verified rule, and stay private', async (t, dialect) => {
  const world = await startCrmWorld(t, dialect)
  const users = world.store.users
  // An operator adds a phone by hand (not verified), then the person proves it with a code.
  const bob = await users.create({ name: 'Bob' })
  await users.addContact(bob.crm_id, ContactKind.Phone, '+4915112345678')
  // A person who signs in with Telegram only: the Telegram account is their contact.
  const carolId = await world.store.federation.createUserWith('telegram', '777000')
  const bobSession = await world.sessionOf(bob.crm_id)
  const carolSession = await world.sessionOf(carolId)

  await until(async () => (await carolSession.userInfo()).status === 200, 'Carol in the CRM')
  assert.deepEqual((await carolSession.userInfo()).result.contacts, [
    { kind: 'telegram', value: '777000', verified: true },
  ])
  await until(async () => (await bobSession.userInfo()).result?.contacts?.length === 1, 'Bob’s phone in the CRM')
  assert.deepEqual((await bobSession.userInfo()).result.contacts, [
    { kind: 'phone', value: '+4915112345678', verified: false },
  ])

  await users.userForContact(ContactKind.Phone, '+4915112345678', ContactFlags.Verified)
  await until(
    async () => (await bobSession.userInfo()).result?.contacts?.[0]?.verified === true,
    'the phone verified in the CRM',
  )

  // The attack: Carol reads Bob's profile, once by id and once with a forged X-Crm the gateway replaces.
  const byId = await carolSession.userInfo(`?crm_id=${bob.crm_id}`)
  assert.equal(byId.status, 200)
  assert.deepEqual(byId.result, {
    crm_id: String(bob.crm_id),
    name: 'Bob',
    contacts: [],
    created: new Date(bob.created).toISOString(),
  })
  const forged = await carolSession.userInfo('', { 'X-Crm': String(bob.crm_id), 'X-KeyType': 'service' })
  assert.equal(forged.result.crm_id, String(carolId), 'the gateway sets X-Crm from the session')

  const anonymous = await fetch(`${world.url}/crm/v1/user_info?crm_id=${bob.crm_id}`)
  assert.equal(anonymous.status, 401)
  assert.equal((await json(anonymous)).result, undefined)
})

forEachDialect('while the CRM is down the chat module still gets names, and the CRM catches up', async (t, dialect) => {
  let stopGateway = async () => {}
  t.after(() => stopGateway())
  const chat = await startChat(t, dialect)
  const crmApp = await buildCrm(
    loadCrmConfig({ CrmDB: await createTestDatabaseUrl(t, dialect), ServiceSecret: SERVICE_SECRET }, {}),
  )
  t.after(() => crmApp.close())
  await crmApp.ready()
  const crmServer = await listenRestartable(t, crmApp.server)
  const crm = createCrmClient(`http://127.0.0.1:${crmServer.port}`, SERVICE_SECRET)
  await crmServer.stop()
  const gateway = await startGateway(t, dialect, {
    settings: { ServiceSecret: SERVICE_SECRET, Modules: { chat: chat.base, crm: crm.base } },
  })
  stopGateway = () => gateway.app.close()

  const alice = await gateway.store.users.create({ name: 'Alice' })
  const bob = await gateway.store.users.create({ name: 'Bob' })
  await until(async () => {
    const pair = await chat.user(bob.crm_id).post('create_private_chat', { peer: String(alice.crm_id) })
    return pair.status === 200 && pair.result.chat.name === 'Alice'
  }, 'Alice known in the chat module while the CRM is down')
  const crmCursor = await gateway.store.db
    .selectFrom('event_cursors')
    .selectAll()
    .where('module', '=', 'profiles:crm')
    .executeTakeFirst()
  assert.equal(crmCursor, undefined, 'the CRM cursor has not moved')

  await crmServer.start()
  const service = { 'X-KeyType': 'service' }
  await until(async () => (await crm.userInfo(service, String(alice.crm_id))).status === 200, 'Alice in the CRM')
  assert.equal((await crm.userInfo(service, String(bob.crm_id))).result.name, 'Bob')
})
