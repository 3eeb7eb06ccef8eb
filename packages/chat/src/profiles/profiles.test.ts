import assert from 'node:assert/strict'
import { createDatabase, errorCodes, migrateToLatest } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, openTestDatabase } from '@atrium/platform/testing'
import { createGroup, startChat, startChatOn } from '../../test/support.ts'
import { chatMigrations } from '../db/migrations/index.ts'
import type { ChatDatabase } from '../db/schema.ts'

const UNKNOWN = 123

forEachDialect('chats and memberships refuse ids of nobody with UserNotFound naming them', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register([1, 'Alice'], [2, 'Bob'])
  const alice = chat.user(1)

  const privateChat = await alice.post('create_private_chat', { peer: String(UNKNOWN) })
  assert.equal(privateChat.status, 404)
  assert.equal(privateChat.error?.code, errorCodes.UserNotFound.code)
  assert.equal(privateChat.error?.message, `no user ${UNKNOWN}`)
  assert.deepEqual(privateChat.error?.details, { members: [String(UNKNOWN)] })
  const viaCreateChat = await alice.post('create_chat', { type: 1, peer: String(UNKNOWN) })
  assert.equal(viaCreateChat.status, 404)

  const group = await alice.post('create_chat', { type: 2, name: 'Team', members: ['2', '77', '78'] })
  assert.equal(group.status, 404)
  assert.equal(group.error?.message, 'no users 77, 78')
  // Nothing was written: Alice has no chat at all.
  assert.deepEqual((await alice.read('get_chats')).chats, [])

  const team = await createGroup(alice, [2])
  const added = await alice.post('add_chat_member', { chat_id: team, member: String(UNKNOWN) })
  assert.equal(added.status, 404)
  assert.equal(added.error?.message, `no user ${UNKNOWN}`)
  const internal = await chat.call('POST', '/private/v1/add_member', {}, { chat_id: team, member: String(UNKNOWN) })
  assert.equal(internal.status, 404)
  assert.equal((await alice.read('get_chat_members', { chat_id: team })).member_count, 2)

  // Once registered, the same id is accepted.
  await chat.register(UNKNOWN)
  assert.equal((await alice.post('create_private_chat', { peer: String(UNKNOWN) })).status, 200)
})

forEachDialect(
  'members and private chats carry names; a person without one is "User" and four digits',
  async (t, dialect) => {
    const chat = await startChat(t, dialect)
    await chat.register([1, 'Alice'], 20_000_123_456)
    const alice = chat.user(1)
    const { chat: withNobody } = await alice.ok('create_private_chat', { peer: '20000123456' })
    assert.equal(withNobody.name, 'User 3456')
    const { chat: seenByOther } = await chat.user(20_000_123_456).ok('create_private_chat', { peer: '1' })
    assert.equal(seenByOther.name, 'Alice')
    const team = await createGroup(alice, [20_000_123_456])
    const { members } = await alice.read('get_chat_members', { chat_id: team })
    assert.deepEqual(
      members.map((member: { member: string; name: string }) => [member.member, member.name]),
      [
        ['1', 'Alice'],
        ['20000123456', 'User 3456'],
      ],
    )
  },
)

forEachDialect('a rename reaches everyone who shares a chat, once per chat, and nobody else', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register([1, 'Alice'], [2, 'Bob'], [3, 'Carol'])
  const { chat: pair } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const { LastTick: before } = (await chat.events({ since: 0 })).result

  // Sent twice: the second, unchanged name records nothing.
  for (let i = 0; i < 2; i++) {
    const stored = await chat.call(
      'POST',
      '/private/v1/set_profiles',
      {},
      { profiles: [{ member: '2', name: 'Robert' }] },
    )
    assert.equal(stored.status, 200)
  }
  const forAlice = (await chat.events({ since: before, subjects: 'user:1' })).result.Events
  const changes = forAlice.filter((event: { EventType: string }) => event.EventType === 'ProfileChanged')
  assert.equal(changes.length, 1)
  assert.deepEqual(changes[0].Data, { chat_id: pair.id, member: '2', name: 'Robert', tick: changes[0].Data.tick })
  const forCarol = (await chat.events({ since: before, subjects: 'user:3' })).result.Events
  assert.deepEqual(forCarol, [])

  // update_profile (a member naming themself) tells the same people.
  await chat.user(1).ok('update_profile', { name: 'Alicia' })
  const forBob = (await chat.events({ since: before, subjects: 'user:2' })).result.Events
  const aliceRenamed = forBob.find(
    (event: { EventType: string; Data: { member: string } }) =>
      event.EventType === 'ProfileChanged' && event.Data.member === '1',
  )
  assert.equal(aliceRenamed?.Data.name, 'Alicia')
})

forEachDialect('get_profiles names only people who share a chat with the caller', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register([1, 'Alice'], [2, 'Bob'], [3, 'Carol'])
  await createGroup(chat.user(1), [2])
  const { profiles } = await chat.user(1).read('get_profiles', { members: '1,2,3,999' })
  assert.deepEqual(profiles, [
    { member: '1', name: 'Alice' },
    { member: '2', name: 'Bob' },
  ])
  const carol = await chat.user(3).read('get_profiles', { members: '1,2' })
  assert.deepEqual(carol.profiles, [])
})

forEachDialect('parallel registrations of one person leave one profile', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      chat.call('POST', '/private/v1/set_profiles', {}, { profiles: [{ member: '5', name: `Name ${i}` }] }),
    ),
  )
  assert.ok(
    results.every((result) => result.status === 200),
    JSON.stringify(results.map((result) => result.error)),
  )
  await chat.register(1)
  const team = await createGroup(chat.user(1), [5])
  const { members } = await chat.user(1).read('get_chat_members', { chat_id: team })
  assert.equal(members.length, 2)
  assert.match(members[1].name, /^Name [0-7]$/)
})

forEachDialect('set_profiles refuses control characters, too many profiles and ids of 0', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  const set = (profiles: object[]) => chat.call('POST', '/private/v1/set_profiles', {}, { profiles })
  assert.equal((await set([{ member: '1', name: 'bad\nname' }])).status, 400)
  assert.equal((await set([{ member: '0', name: 'Zero' }])).status, 400)
  assert.equal((await set([])).status, 400)
  const many = Array.from({ length: 501 }, (_, i) => ({ member: String(i + 1), name: '' }))
  assert.equal((await set(many)).status, 400)
  assert.equal((await set(many.slice(0, 500))).status, 200)
})

forEachDialect(
  'migration 0011 makes every member of an existing chat a known user, keeping chosen names',
  async (t, dialect) => {
    const database = await openTestDatabase<ChatDatabase>(t, dialect)
    const before = Object.fromEntries(Object.entries(chatMigrations).filter(([name]) => name < '0011'))
    await migrateToLatest(database, before)
    const member = (chat_id: number, id: number) => ({
      chat_id,
      member: id,
      role: 0,
      last_read: 0,
      joined: 1,
      timetick_update: 1,
    })
    await database.db
      .insertInto('chat_members')
      .values([member(1, 7), member(1, 8), member(2, 8)])
      .execute()
    await database.db.insertInto('chat_profiles').values({ member: 8, name: 'Named', timetick_update: 5 }).execute()
    await migrateToLatest(database, chatMigrations)
    const profiles = await database.db.selectFrom('chat_profiles').selectAll().orderBy('member').execute()
    assert.deepEqual(
      profiles.map((row) => [Number(row.member), row.name]),
      [
        [7, ''],
        [8, 'Named'],
      ],
    )
  },
)

forEachDialect(
  'set_profiles stores scopes; omitted scopes keep the stored ones; a malformed scope is refused',
  async (t, dialect) => {
    const url = await createTestDatabaseUrl(t, dialect)
    const chat = await startChatOn(t, url)
    const database = createDatabase<ChatDatabase>(url)
    t.after(() => database.destroy())
    const scopes = async () =>
      (await database.db.selectFrom('chat_profiles').select('scopes').where('member', '=', 7).executeTakeFirst())
        ?.scopes
    const setProfiles = (profile: object) =>
      chat.call('POST', '/private/v1/set_profiles', {}, { profiles: [{ member: '7', name: 'Grace', ...profile }] })

    assert.equal((await setProfiles({ scopes: ['admin', 'support', 'admin'] })).status, 200)
    assert.equal(await scopes(), 'admin support')
    assert.equal((await setProfiles({})).status, 200)
    assert.equal(await scopes(), 'admin support')
    for (const bad of [['has space'], [''], ['x'.repeat(65)], Array.from({ length: 51 }, (_, i) => `s${i}`)]) {
      const refused = await setProfiles({ scopes: bad })
      assert.equal(refused.status, 400, JSON.stringify(bad))
    }
    assert.equal((await setProfiles({ scopes: [] })).status, 200)
    assert.equal(await scopes(), '')
  },
)
