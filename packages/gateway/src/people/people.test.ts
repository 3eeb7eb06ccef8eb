import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startPeopleWorld } from '../../test/people.ts'
import { createClock } from '../../test/support.ts'
import { SEARCHES_PER_MINUTE } from './people.plugin.ts'

type Found = { id: string; name: string; matched: string }
const ids = (people: Found[]) => people.map((person) => person.id)

forEachDialect(
  'a signed-in person finds others by any part of their display name, not themself',
  async (t, dialect) => {
    const world = await startPeopleWorld(t, dialect)
    const me = await world.person('Alice Archer', { email: 'alice@example.com' })
    const bob = await world.person('Bob Alison')
    const carol = await world.person('carol')
    await world.person('', { email: 'unnamed-al@example.com' })

    const { status, body } = await me.search('ALI')
    assert.equal(status, 200)
    assert.deepEqual(body.result.people, [{ id: String(bob.crmId), name: 'Bob Alison', matched: 'name' }])
    assert.deepEqual(ids((await me.search('Car')).body.result.people), [String(carol.crmId)])
    // Wildcards are text: a % finds only names that contain one.
    assert.deepEqual((await me.search('%%')).body.result.people, [])
  },
)

forEachDialect('contacts find their owner only when typed in full, and are never returned', async (t, dialect) => {
  const world = await startPeopleWorld(t, dialect)
  const me = await world.person('Searcher')
  const dana = await world.person('Dana', { email: 'dana.secret@example.com', phone: '+491701234567' })

  // The attack: enumerate addresses a piece at a time.
  for (const partial of [
    'dana.secret',
    'dana.secret@',
    'dana.secret@example',
    '@example.com',
    'example.com',
    'secret',
    '+4917012345',
    '1701234567',
  ]) {
    const { status, body } = await me.search(partial)
    assert.equal(status, 200, partial)
    assert.ok(
      !body.result.people.some((person: Found) => person.id === String(dana.crmId)),
      `"${partial}" finds nobody`,
    )
  }
  const byEmail = await me.search('  Dana.Secret@Example.com ')
  assert.deepEqual(byEmail.body.result.people, [{ id: String(dana.crmId), name: 'Dana', matched: 'email' }])
  const byPhone = await me.search('+49 170 1234567')
  assert.deepEqual(byPhone.body.result.people, [{ id: String(dana.crmId), name: 'Dana', matched: 'phone' }])
  assert.ok(!JSON.stringify([byEmail.body, byPhone.body]).includes('secret'), 'the contact is not echoed')
})

forEachDialect(
  'a person without a display name is found only by a full contact, as "User" and four digits',
  async (t, dialect) => {
    const world = await startPeopleWorld(t, dialect)
    const me = await world.person('Searcher')
    const quiet = await world.person('', { email: 'quiet@example.com' })
    assert.deepEqual((await me.search('User')).body.result.people, [])
    const found = await me.search('quiet@example.com')
    assert.deepEqual(found.body.result.people, [
      { id: String(quiet.crmId), name: `User ${String(quiet.crmId).slice(-4)}`, matched: 'email' },
    ])
  },
)

forEachDialect('guests, apps and keys cannot search; short queries and floods are refused', async (t, dialect) => {
  // A clock of our own, so the minute's window does not roll over in the middle of the test.
  const clock = createClock()
  const world = await startPeopleWorld(t, dialect, { now: clock.now })
  const me = await world.person('Searcher')
  await world.person('Bobby')

  const anonymous = await world.callsAs({}).search('Bob')
  assert.equal(anonymous.status, 401)
  assert.equal(anonymous.body.error.code, 2003)
  // A guest of an invite has no gateway session, only the invite code and device headers.
  const guest = await world.callsAs({ 'x-invite-code': 'abcdefgh', 'x-device-guid': crypto.randomUUID() }).search('Bob')
  assert.equal(guest.status, 401)
  const { app, secret } = await world.store.apps.create({ name: 'shop', owner: me.crmId })
  const login = await fetch(`${world.url}/auth/v1/app/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ appId: String(app.id), secret }),
  })
  const token = (await json(login)).result.token
  const asApp = await world.callsAs({ authorization: `Bearer ${token}` }).search('Bob')
  assert.equal(asApp.status, 403)

  const short = await me.search(' B ')
  assert.equal(short.status, 400)
  assert.equal(short.body.error.message, 'Type at least 2 characters.')

  for (let i = 0; i < SEARCHES_PER_MINUTE; i++) assert.equal((await me.search('Bob')).status, 200)
  const flooded = await me.search('Bob')
  assert.equal(flooded.status, 429)
  assert.ok(Number(flooded.retryAfter) >= 1)
  clock.advance(60_000)
  assert.equal((await me.search('Bob')).status, 200, 'the next minute allows searches again')
})

forEachDialect('POST /auth/v1/profile sets the own display name; bad names are refused', async (t, dialect) => {
  const world = await startPeopleWorld(t, dialect)
  const me = await world.person('Old Name')
  const saved = await me.setName('  New Name ')
  assert.equal(saved.status, 200)
  assert.deepEqual(saved.body.result, { crmId: String(me.crmId), name: 'New Name' })
  assert.equal((await world.store.users.get(me.crmId))?.name, 'New Name')
  assert.equal((await me.setName('two\nlines')).status, 400)
  assert.equal((await me.setName('   ')).status, 400)
  assert.equal((await world.callsAs({}).setName('Nobody')).status, 401)
})
