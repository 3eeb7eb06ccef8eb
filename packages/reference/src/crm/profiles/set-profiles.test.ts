import assert from 'node:assert/strict'
import { createDatabase, signedHeaders } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, json, listNullableColumns } from '@atrium/platform/testing'
import { startCrm } from '../../../test/crm.ts'
import type { CrmDatabase } from '../db/schema.ts'
import { MAX_CONTACTS, MAX_PROFILES_PER_CALL } from './profiles.schema.ts'

const SERVICE = { 'X-KeyType': 'service' }

forEachDialect('set_profiles stores a profile and its contacts, and user_info reads them back', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  const created = '2026-11-20T10:11:12.345Z'
  const contacts = [
    { kind: 'telegram', value: '777000', verified: true },
    { kind: 'phone', value: '+4915112345678', verified: false },
    { kind: 'email', value: 'alice@example.com', verified: true },
  ]
  assert.deepEqual(await crm.register([{ member: '1001', name: '  Alice Archer ', created, contacts }]), {
    stored: 1,
    changed: 1,
  })
  const info = await crm.userInfo(SERVICE, '1001')
  assert.equal(info.status, 200, JSON.stringify(info.error))
  assert.deepEqual(info.result, {
    crm_id: '1001',
    name: 'Alice Archer',
    // Kept in kind order (email, phone, telegram), whatever order the gateway sent.
    contacts: [contacts[2], contacts[1], contacts[0]],
    created,
  })
})

forEachDialect(
  'set_profiles is an upsert: a repeat changes nothing, a change replaces the contacts',
  async (t, dialect) => {
    const url = await createTestDatabaseUrl(t, dialect)
    const crm = await startCrm(t, dialect, url)
    const database = createDatabase<CrmDatabase>(url)
    t.after(() => database.destroy())
    const tickOf = async () =>
      (
        await database.db
          .selectFrom('profiles')
          .select('timetick_update')
          .where('crm_id', '=', 1001)
          .executeTakeFirstOrThrow()
      ).timetick_update

    const first = {
      member: '1001',
      name: '',
      created: '2026-01-02T03:04:05.000Z',
      contacts: [{ kind: 'email', value: 'a@example.com', verified: false }],
    }
    await crm.register([first])
    const tick = await tickOf()
    assert.deepEqual(await crm.register([first]), { stored: 1, changed: 0 }, 'the same profile again')
    assert.equal(await tickOf(), tick, 'an unchanged profile keeps its timetick_update')

    // Omitted contacts and created keep what is stored; a new name is taken.
    assert.deepEqual(await crm.register([{ member: '1001', name: 'Ann' }]), { stored: 1, changed: 1 })
    assert.ok((await tickOf()) > tick)
    let info = (await crm.userInfo(SERVICE, '1001')).result
    assert.deepEqual([info.name, info.created, info.contacts], ['Ann', first.created, first.contacts])

    // A contact list replaces the stored one whole: verified now, the old address gone.
    const contacts = [
      { kind: 'email', value: 'b@example.com', verified: true },
      { kind: 'phone', value: '+15550001111', verified: true },
    ]
    await crm.register([{ member: '1001', name: 'Ann', contacts, created: null }])
    info = (await crm.userInfo(SERVICE, '1001')).result
    assert.deepEqual(info.contacts, contacts)
    assert.equal(info.created, first.created, 'null created keeps it')
    await crm.register([{ member: '1001', name: 'Ann', contacts: [] }])
    assert.deepEqual((await crm.userInfo(SERVICE, '1001')).result.contacts, [])

    // Without a name of their own, a person is shown as others see them.
    await crm.register([{ member: '2051679846002305', name: '' }])
    assert.equal((await crm.userInfo(SERVICE, '2051679846002305')).result.name, 'User 2305')
  },
)

forEachDialect('a full batch, 500 people with 20 contacts each, is stored in one call', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  const profiles = Array.from({ length: MAX_PROFILES_PER_CALL }, (_, i) => ({
    member: String(5000 + i),
    name: `Person ${i}`,
    contacts: Array.from({ length: MAX_CONTACTS }, (_, j) => ({
      kind: 'phone',
      value: `+1555${String(i * 100 + j).padStart(6, '0')}`,
      verified: j === 0,
    })),
  }))
  assert.deepEqual(await crm.register(profiles), { stored: 500, changed: 500 })
  const last = (await crm.userInfo(SERVICE, String(5000 + MAX_PROFILES_PER_CALL - 1))).result
  assert.equal(last.contacts.length, MAX_CONTACTS)
  assert.deepEqual(last.contacts[0], { kind: 'phone', value: '+1555049900', verified: true })
})

forEachDialect('the last entry of a person in one call wins', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  assert.deepEqual(
    await crm.register([
      { member: '1001', name: 'First' },
      { member: '1002', name: 'Other' },
      { member: '1001', name: 'Second' },
    ]),
    { stored: 2, changed: 2 },
  )
  assert.equal((await crm.userInfo(SERVICE, '1001')).result.name, 'Second')
})

forEachDialect('a refused batch writes nothing, whichever entry is wrong', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  const good = { member: '1001', name: 'Good', created: '2026-01-01T00:00:00Z', contacts: [] }
  const bad: Array<[string, unknown]> = [
    ['NUL in a name', { member: '1002', name: 'Bad\u0000Name' }],
    [
      'NUL in a contact',
      { member: '1002', name: 'B', contacts: [{ kind: 'email', value: 'a\u0000@x.io', verified: true }] },
    ],
    ['a control character', { member: '1002', name: 'Line\nbreak' }],
    ['an unknown contact kind', { member: '1002', name: 'B', contacts: [{ kind: 'fax', value: '1', verified: true }] }],
    [
      'verified as a string',
      { member: '1002', name: 'B', contacts: [{ kind: 'email', value: 'a@x.io', verified: 'yes' }] },
    ],
    ['an empty contact', { member: '1002', name: 'B', contacts: [{ kind: 'email', value: '', verified: true }] }],
    [
      'a contact listed twice',
      {
        member: '1002',
        name: 'B',
        contacts: [
          { kind: 'email', value: 'a@x.io', verified: true },
          { kind: 'email', value: 'a@x.io', verified: false },
        ],
      },
    ],
    [
      'too many contacts',
      {
        member: '1002',
        name: 'B',
        contacts: Array.from({ length: MAX_CONTACTS + 1 }, (_, i) => ({
          kind: 'phone',
          value: `+1555000${1000 + i}`,
          verified: false,
        })),
      },
    ],
    ['a name too long', { member: '1002', name: 'x'.repeat(101) }],
    ['member 0', { member: '0', name: 'B' }],
    ['a member as a number', { member: 1002, name: 'B' }],
    ['a member past 2^53', { member: '9999999999999999', name: 'B' }],
    ['a time without zone', { member: '1002', name: 'B', created: '2026-01-01T00:00:00' }],
    ['a day that does not exist', { member: '1002', name: 'B', created: '2026-02-30T00:00:00Z' }],
    ['an unknown field', { member: '1002', name: 'B', email: 'b@x.io' }],
    ['no name', { member: '1002' }],
  ]
  for (const [what, profile] of bad) {
    const refused = await crm.setProfiles([good, profile])
    assert.equal(refused.status, 400, `${what}: ${JSON.stringify(refused)}`)
    assert.equal(refused.error?.code, 1000, what)
  }
  assert.equal((await crm.setProfiles([])).error?.code, 1000, 'an empty batch')
  const tooMany = Array.from({ length: MAX_PROFILES_PER_CALL + 1 }, (_, i) => ({ member: String(1000 + i), name: '' }))
  assert.equal((await crm.setProfiles(tooMany)).error?.code, 1000, 'too many profiles')
  assert.equal((await crm.setProfiles('{"profiles": [')).error?.code, 1001, 'malformed JSON')

  const oversized = await crm.setProfiles(`{"profiles":[{"member":"1001","name":"${'x'.repeat(1024 * 1024)}"}]}`)
  assert.equal(oversized.status, 413)
  assert.equal(oversized.error?.code, 1002)

  const none = await crm.userInfo(SERVICE, '1001')
  assert.equal(none.status, 404, 'nothing of any refused batch was stored')
})

forEachDialect('set_profiles refuses a caller without the gateway’s hop signature', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  const body = JSON.stringify({ profiles: [{ member: '1001', name: 'Mallory' }] })
  const unsigned = await fetch(`${crm.base}/private/v1/set_profiles`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
  assert.equal(unsigned.status, 401)
  assert.equal((await json(unsigned)).error.code, 1008)
  const wrongSecret = await fetch(`${crm.base}/private/v1/set_profiles`, {
    method: 'POST',
    headers: signedHeaders('another-secret'.padEnd(40, '-'), 'POST', '/private/v1/set_profiles', {
      'content-type': 'application/json',
    }),
    body,
  })
  assert.equal(wrongSecret.status, 401)
  assert.equal((await crm.userInfo(SERVICE, '1001')).status, 404)
})

forEachDialect('parallel batches naming the same people leave one profile each, consistent', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  const crm = await startCrm(t, dialect, url)
  // Half the batches name the people in reverse order, so row locks alone would deadlock.
  const batches = Array.from({ length: 8 }, (_, i) =>
    (i % 2 === 0 ? [1001, 1002, 1003] : [1003, 1002, 1001]).map((member) => ({
      member: String(member),
      name: `Name ${i}`,
      created: '2026-01-01T00:00:00.000Z',
      contacts: [{ kind: 'email', value: `m${member}-${i}@example.com`, verified: i % 2 === 0 }],
    })),
  )
  const answers = await Promise.all(batches.map((batch) => crm.setProfiles(batch)))
  for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.error))

  const database = createDatabase<CrmDatabase>(url)
  t.after(() => database.destroy())
  const rows = await database.db.selectFrom('profiles').selectAll().orderBy('crm_id').execute()
  assert.deepEqual(
    rows.map((row) => row.crm_id),
    [1001, 1002, 1003],
  )
  for (const row of rows) {
    const i = Number(row.name.slice('Name '.length))
    const { contacts } = (await crm.userInfo(SERVICE, String(row.crm_id))).result
    assert.deepEqual(
      contacts,
      [{ kind: 'email', value: `m${row.crm_id}-${i}@example.com`, verified: i % 2 === 0 }],
      'the contacts come from the same batch as the name',
    )
  }
})

forEachDialect('the CRM database has no nullable column', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  await startCrm(t, dialect, url)
  const database = createDatabase(url)
  t.after(() => database.destroy())
  assert.deepEqual(await listNullableColumns(database), [])
})
