import assert from 'node:assert/strict'
import { createDatabase, timetickAt } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, listenRestartable, until } from '@atrium/platform/testing'
import { buildChat } from '../../../chat/src/app.ts'
import { loadChatConfig } from '../../../chat/src/config.ts'
import type { ChatDatabase } from '../../../chat/src/db/schema.ts'
import { createChatClient, SERVICE_SECRET, startChatOn } from '../../../chat/test/support.ts'
import { startPeopleWorld } from '../../test/people.ts'
import { startGateway } from '../../test/support.ts'
import { createEventCursors } from '../events/event-cursors.repository.ts'
import { createModuleInstances } from '../proxy/module-instances.ts'
import { createProfileSync } from './profile-sync.ts'
import { chatProfileTarget } from './profile-targets.ts'

type Member = { member: string; name: string }

forEachDialect('names reach the chat module whatever path set them', async (t, dialect) => {
  const world = await startPeopleWorld(t, dialect)
  // CLI-style creation with --name, a sign-up without a name, a profile edit, an admin change.
  const named = await world.store.users.create({ name: 'Created With Name' })
  const { user: signedUp } = await world.store.users.userForContact(1, 'new@example.com', 0)
  const editor = await world.person('Before Edit')
  assert.equal((await editor.setName('After Edit')).status, 200)
  await world.store.users.setScopes(named.crm_id, ['chat'])

  const owner = world.chat.user(editor.crmId)
  const expected = [
    [String(named.crm_id), 'Created With Name'],
    [String(signedUp.crm_id), `User ${String(signedUp.crm_id).slice(-4)}`],
    [String(editor.crmId), 'After Edit'],
  ].sort()
  let members: Member[] = []
  await until(async () => {
    const created = await owner.post('create_chat', {
      type: 2,
      name: 'Everyone',
      members: [String(named.crm_id), String(signedUp.crm_id)],
    })
    if (created.status !== 200) return false
    members = (await owner.read('get_chat_members', { chat_id: created.result.chat.id })).members
    return members.some((member) => member.name === 'After Edit')
  }, 'every user registered in the chat module')
  assert.deepEqual(members.map((member) => [member.member, member.name]).sort(), expected)
})

forEachDialect('a change written by another process (the CLI) is pushed by the next sync', async (t, dialect) => {
  const world = await startPeopleWorld(t, dialect)
  const alice = await world.person('Alice')
  const bob = await world.person('Bob')
  await world.app.syncProfiles()
  const { chat: pair } = await world.chat.user(alice.crmId).ok('create_private_chat', { peer: String(bob.crmId) })
  assert.equal(pair.name, 'Bob')
  // Straight into the database, as `atrium user` in another process writes: no in-process notice.
  const tick = world.store.nextTick()
  await world.store.db
    .updateTable('users')
    .set({ name: 'Robert', timetick_update: tick })
    .where('crm_id', '=', bob.crmId)
    .execute()
  await world.app.syncProfiles()
  const renamed = await world.chat.user(alice.crmId).read('get_chat_info', { chat_id: pair.id })
  assert.equal(renamed.name, 'Robert')
  const events = (await world.chat.events({ since: 0, subjects: `user:${alice.crmId}` })).result.Events
  const change = events.find((event: { EventType: string }) => event.EventType === 'ProfileChanged')
  assert.deepEqual([change?.Data.member, change?.Data.name], [String(bob.crmId), 'Robert'])
})

forEachDialect(
  'while the chat module is down the sync retries, and nothing is lost across a gateway restart',
  async (t, dialect) => {
    // The gateways stop first (after-hooks run in the order they were added), then the chat module.
    const gateways: Array<{ close(): Promise<unknown> }> = []
    t.after(() => Promise.all(gateways.map((gateway) => gateway.close())))
    const chatApp = await buildChat(
      loadChatConfig({ ChatDB: await createTestDatabaseUrl(t, dialect), ServiceSecret: SERVICE_SECRET }, {}),
    )
    t.after(() => chatApp.close())
    await chatApp.ready()
    const chatServer = await listenRestartable(t, chatApp.server)
    const chat = createChatClient(`http://127.0.0.1:${chatServer.port}`)
    await chatServer.stop()

    const gatewayDb = await createTestDatabaseUrl(t, dialect)
    const settings = { GatewayDB: gatewayDb, Modules: { chat: chat.base }, ServiceSecret: SERVICE_SECRET }
    const first = await startGateway(t, dialect, { settings })
    gateways.push(first.app)
    const owner = await first.store.users.create({ name: 'Owner' })
    const early = await first.store.users.create({ name: 'Early Bird' })
    await first.app.close()

    // A second gateway on the same database, started while the module is still down.
    const second = await startGateway(t, dialect, { settings })
    gateways.push(second.app)
    const late = await second.store.users.create({ name: 'Late Comer' })
    await chatServer.start()
    let members: Member[] = []
    await until(async () => {
      const created = await chat.user(owner.crm_id).post('create_chat', {
        type: 2,
        name: 'Retry',
        members: [String(early.crm_id), String(late.crm_id)],
      })
      if (created.status !== 200) return false
      members = (await chat.user(owner.crm_id).read('get_chat_members', { chat_id: created.result.chat.id })).members
      return true
    }, 'the profiles pushed once the chat module is back')
    assert.deepEqual(members.map((member) => member.name).sort(), ['Early Bird', 'Late Comer', 'Owner'])
  },
)

forEachDialect(
  'scopes granted and removed at the gateway reach the chat module with the next sync',
  async (t, dialect) => {
    const chatUrl = await createTestDatabaseUrl(t, dialect)
    let stopGateway = async () => {}
    t.after(() => stopGateway())
    const chat = await startChatOn(t, chatUrl)
    const gateway = await startGateway(t, dialect, {
      settings: { Modules: { chat: chat.base }, ServiceSecret: SERVICE_SECRET },
    })
    stopGateway = () => gateway.app.close()
    const chatDb = createDatabase<ChatDatabase>(chatUrl)
    t.after(() => chatDb.destroy())
    const scopesInChat = async (crmId: number) =>
      (await chatDb.db.selectFrom('chat_profiles').select('scopes').where('member', '=', crmId).executeTakeFirst())
        ?.scopes

    const alice = await gateway.store.users.create({ name: 'Alice', scopes: ['admin', 'support'] })
    await gateway.app.syncProfiles()
    assert.equal(await scopesInChat(alice.crm_id), 'admin support')

    await gateway.store.users.setScopes(alice.crm_id, ['support'])
    await gateway.app.syncProfiles()
    assert.equal(await scopesInChat(alice.crm_id), 'support')
    await gateway.store.users.setScopes(alice.crm_id, [])
    await gateway.app.syncProfiles()
    assert.equal(await scopesInChat(alice.crm_id), '')
  },
)

forEachDialect('a sync reads again only what may have committed since the last complete one', async (t, dialect) => {
  const chat = await startChatOn(t, await createTestDatabaseUrl(t, dialect))
  const gateway = await startGateway(t, dialect)
  const { store } = gateway
  const base = Date.now()
  let offset = 0
  const pushed: string[][] = []
  const chatTarget = chatProfileTarget(createModuleInstances('chat', [chat.base], { backoffMs: 100 }))
  const sync = createProfileSync({
    target: {
      ...chatTarget,
      batchSize: 4,
      async describe(users) {
        pushed.push(users.map((user) => user.name))
        return chatTarget.describe(users)
      },
    },
    serviceSecret: SERVICE_SECRET,
    users: store.users,
    cursors: createEventCursors(store.db),
    log: gateway.app.log,
    now: () => base + offset,
  })
  t.after(() => sync.close())
  /** A user whose last change was drawn `ago` ms before the test's clock started. */
  async function changed(name: string, ago: number) {
    const user = await store.users.create({ name })
    const tick = timetickAt(base - ago)
    await store.db.updateTable('users').set({ timetick_update: tick }).where('crm_id', '=', user.crm_id).execute()
  }
  const take = () => pushed.splice(0).flat()
  // An import: five users changed between 8 and 4 seconds ago.
  for (const [index, name] of ['Ada', 'Bo', 'Cy', 'Di', 'Ed'].entries()) await changed(name, 8000 - index * 1000)

  await sync.flush()
  assert.deepEqual(take(), ['Ada', 'Bo', 'Cy', 'Di', 'Ed'], 'the first run pushes every user, in batches of four')
  // Drawn 5.5 s ago, below the cursor, but committed only now: the next run still reads it.
  await changed('Late', 5500)
  await sync.flush()
  assert.deepEqual(
    take(),
    ['Ada', 'Bo', 'Cy', 'Late', 'Di', 'Ed'],
    'within ten seconds of a run everything is read again',
  )

  offset = 11_000
  await sync.flush()
  take()
  await sync.flush()
  assert.deepEqual(take(), [], 'ten seconds after a complete run, nothing it read is read again')
  await changed('Newer', -10_500)
  await sync.flush()
  assert.deepEqual(take(), ['Newer'])
})
