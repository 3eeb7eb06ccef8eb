import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { ContactFlags, createTimetickGenerator, type DatabaseDialect, migrateToLatest } from '@atrium/platform'
import { forEachDialect, openTestDatabase } from '@atrium/platform/testing'
import { gatewayMigrations } from '../db/migrations/index.ts'
import type { GatewayDatabase } from '../db/schema.ts'
import { ContactKind, createUsers } from './users.repository.ts'

const PARALLEL = 12

async function openUsers(t: TestContext, dialect: DatabaseDialect) {
  const database = await openTestDatabase<GatewayDatabase>(t, dialect)
  await migrateToLatest(database, gatewayMigrations)
  return { db: database.db, users: createUsers(database.db, createTimetickGenerator({ node: 1 })) }
}

forEachDialect('parallel first sign-ins with one contact make one user who owns it', async (t, dialect) => {
  const { db, users } = await openUsers(t, dialect)

  const results = await Promise.all(
    Array.from({ length: PARALLEL }, () =>
      users.userForContact(ContactKind.Email, 'ann@example.com', ContactFlags.Verified),
    ),
  )

  const storedUsers = await db.selectFrom('users').select('crm_id').execute()
  const contacts = await db.selectFrom('contacts').select(['crm_id', 'kind', 'value', 'flags']).execute()
  assert.equal(storedUsers.length, 1, 'one user row')
  const crmId = storedUsers[0]!.crm_id
  assert.deepEqual(contacts, [
    { crm_id: crmId, kind: ContactKind.Email, value: 'ann@example.com', flags: ContactFlags.Verified },
  ])
  assert.deepEqual(
    results.map((result) => result.user.crm_id),
    Array(PARALLEL).fill(crmId),
    'every sign-in answers with that user',
  )
  assert.equal(results.filter((result) => result.created).length, 1, 'exactly one sign-in created the user')
})

forEachDialect(
  'a contact added or newly verified marks its user changed, so the profile syncs push it',
  async (t, dialect) => {
    const { users } = await openUsers(t, dialect)
    const bob = await users.create({ name: 'Bob' })
    let notices = 0
    users.watch(() => notices++)
    const tickOf = async () => (await users.get(bob.crm_id))!.timetick_update

    await users.addContact(bob.crm_id, ContactKind.Phone, '+4915112345678')
    const added = await tickOf()
    assert.ok(added > bob.timetick_update, 'adding a contact')
    await users.userForContact(ContactKind.Phone, '+4915112345678', ContactFlags.Verified)
    const verified = await tickOf()
    assert.ok(verified > added, 'verifying it')
    await users.userForContact(ContactKind.Phone, '+4915112345678', ContactFlags.Verified)
    assert.equal(await tickOf(), verified, 'signing in again with a verified contact changes nothing')
    assert.equal(notices, 2)
  },
)

forEachDialect('setContactFlags changes a contact of that user only and marks the user changed', async (t, dialect) => {
  const { users } = await openUsers(t, dialect)
  const ann = await users.create({ name: 'Ann' })
  const bob = await users.create({ name: 'Bob' })
  const contact = await users.addContact(ann.crm_id, ContactKind.Email, 'ann@example.com')

  assert.equal(await users.setContactFlags(bob.crm_id, contact.id, ContactFlags.Verified), undefined)
  assert.equal((await users.contactsOf(ann.crm_id))[0]!.flags, ContactFlags.ManuallyAdded)

  const changed = await users.setContactFlags(
    ann.crm_id,
    contact.id,
    ContactFlags.ManuallyAdded | ContactFlags.Verified,
  )
  assert.equal(changed?.flags, ContactFlags.ManuallyAdded | ContactFlags.Verified)
  assert.ok((await users.get(ann.crm_id))!.timetick_update > ann.timetick_update)
})
