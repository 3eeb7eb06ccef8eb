import assert from 'node:assert/strict'
import { ContactFlags } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { assertActionsRefused, nextLink, startPanel, tableRows } from '../../test/admin.ts'
import { ContactKind } from '../users/users.repository.ts'

forEachDialect(
  'the user list searches by name, email address and CRM id, and pages newest first',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const { users } = panel.store
    const made = []
    for (const name of ['Ada Archer', 'Ben Archer', 'Cy Baker', 'Dee Archer']) made.push(await users.create({ name }))
    await users.addContact(made[2]!.crm_id, ContactKind.Email, 'cy@example.com', ContactFlags.Verified)

    const archers = made.filter((user) => user.name.includes('Archer')).reverse()
    const first = await panel.page('/ProxyAdmin/Users?Search=archer&Limit=2', panel.operator)
    assert.deepEqual(
      tableRows(first.html).map((row) => row.split(' (')[0]),
      archers.slice(0, 2).map((user) => user.name),
    )
    const next = nextLink(first.html)
    assert.equal(next, `/ProxyAdmin/Users?Search=archer&Limit=2&FromTick=${archers[1]!.crm_id}`)
    const second = await panel.page(next!, panel.operator)
    assert.deepEqual(
      tableRows(second.html).map((row) => row.split(' (')[0]),
      [archers[2]!.name],
    )
    assert.equal(nextLink(second.html), undefined)

    const byEmail = tableRows((await panel.page('/ProxyAdmin/Users?Search=CY%40example.com', panel.operator)).html)
    assert.equal(byEmail.length, 1)
    assert.match(byEmail[0]!, new RegExp(`^Cy Baker \\(${made[2]!.crm_id}\\) cy@example.com`))
    const byId = tableRows((await panel.page(`/ProxyAdmin/Users?Search=${made[0]!.crm_id}`, panel.operator)).html)
    assert.match(byId[0]!, /^Ada Archer /)
    const none = await panel.page('/ProxyAdmin/Users?Search=nobody', panel.operator)
    assert.match(none.html, /No user matches “nobody”/)
  },
)

forEachDialect(
  'a user’s page shows contacts with flags, sessions and API keys; the operator revokes a session and a key',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const { users, sessions, apiKeys } = panel.store
    const user = await users.create({ name: 'Rita Revoked' })
    await users.addContact(user.crm_id, ContactKind.Phone, '+14155550100', ContactFlags.Verified)
    const phone = await sessions.create({
      crmId: user.crm_id,
      method: 'phone_otp',
      ip: '198.51.100.7',
      userAgent: 'Phone',
    })
    const laptop = await sessions.create({
      crmId: user.crm_id,
      method: 'email_otp',
      ip: '198.51.100.8',
      userAgent: 'Laptop',
    })
    const key = await apiKeys.create({
      keyType: 'user',
      crmId: user.crm_id,
      appId: 0,
      scopes: [],
      name: 'backup script',
    })

    const detail = await panel.page(`/ProxyAdmin/UserDetail?CrmId=${user.crm_id}`, panel.operator)
    assert.equal(detail.status, 200)
    assert.match(detail.html, /<h1>Rita Revoked \(\d+\)<\/h1>/)
    assert.match(detail.html, /\+14155550100<\/td><td>Verified, ManuallyAdded<\/td>/)
    assert.match(detail.html, /198\.51\.100\.7/)
    assert.match(detail.html, /backup script/)
    // The page never shows a whole session id (the hash of the cookie token).
    assert.doesNotMatch(detail.html, new RegExp(phone.session.id))

    const revoked = await panel.post(
      '/ProxyAdmin/UserDetail/RevokeSession',
      { CrmId: String(user.crm_id), Session: phone.session.id.slice(0, 16) },
      panel.operator,
    )
    assert.equal(revoked.status, 303)
    assert.match(
      revoked.location,
      new RegExp(`^/ProxyAdmin/UserDetail\\?CrmId=${user.crm_id}&notice=Session\\+revoked`),
    )
    assert.equal(await sessions.resolve(phone.token), undefined)
    assert.ok(await sessions.resolve(laptop.token))

    // Another user's key cannot be revoked through this user's page.
    const other = await users.create({ name: 'Otto' })
    const otherKey = await apiKeys.create({ keyType: 'user', crmId: other.crm_id, appId: 0, scopes: [], name: 'other' })
    const wrong = await panel.post(
      '/ProxyAdmin/UserDetail/RevokeApiKey',
      { CrmId: String(user.crm_id), Key: String(otherKey.row.id) },
      panel.operator,
    )
    assert.match(wrong.location, /error=That\+API\+key\+is\+not/)
    assert.ok(await apiKeys.verify(otherKey.key))

    const keyGone = await panel.post(
      '/ProxyAdmin/UserDetail/RevokeApiKey',
      { CrmId: String(user.crm_id), Key: String(key.row.id) },
      panel.operator,
    )
    assert.match(keyGone.location, /notice=API\+key\+backup\+script\+revoked/)
    assert.equal(await apiKeys.verify(key.key), undefined)

    const after = await panel.page(`/ProxyAdmin/UserDetail?CrmId=${user.crm_id}`, panel.operator)
    assert.doesNotMatch(after.html, /198\.51\.100\.7/)
    assert.match(after.html, /revoked 20/)
    const log = tableRows((await panel.page('/ProxyAdmin/Actions', panel.operator)).html)
    assert.deepEqual(
      log.map((row) =>
        /(session\.revoke|api_key\.revoke) (\d+)(?: .*)? (ok|That API key is not an active key of this user\.)$/
          .exec(row)
          ?.slice(1),
      ),
      [
        ['api_key.revoke', String(user.crm_id), 'ok'],
        ['api_key.revoke', String(user.crm_id), 'That API key is not an active key of this user.'],
        ['session.revoke', String(user.crm_id), 'ok'],
      ],
    )
  },
)

/** The notice or error line a redirect carries. */
function lineOf(location: string, kind: 'notice' | 'error'): string {
  return new URL(location, 'http://panel').searchParams.get(kind) ?? ''
}

forEachDialect(
  'an operator grants and revokes scopes and marks a contact verified or not; bad scope names change nothing',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const { users } = panel.store
    const user = await users.create({ name: 'Sam Scoped', scopes: ['chat'] })
    const contact = await users.addContact(user.crm_id, ContactKind.Email, 'sam@example.com')
    const crmId = String(user.crm_id)
    const scopesOf = async () => users.scopesOf((await users.get(user.crm_id))!)

    const detail = await panel.page(`/ProxyAdmin/UserDetail?CrmId=${crmId}`, panel.operator)
    assert.match(detail.html, /<input id="scopes" name="Scopes" value="chat"/)
    assert.match(detail.html, /sam@example.com<\/td><td>ManuallyAdded<\/td>.*Mark verified/)

    const granted = await panel.post(
      '/ProxyAdmin/UserDetail/Scopes',
      { CrmId: crmId, Scopes: 'chat, admin files:read' },
      panel.operator,
    )
    assert.equal(granted.status, 303)
    assert.equal(lineOf(granted.location, 'notice'), 'Scopes saved: chat admin files:read.')
    assert.deepEqual(await scopesOf(), ['chat', 'admin', 'files:read'])

    for (const [scopes, reason] of [
      ['chat ad<min>', /Invalid scope "ad<min>"/],
      ['x'.repeat(65), /at most 64/],
    ] as const) {
      const answer = await panel.post('/ProxyAdmin/UserDetail/Scopes', { CrmId: crmId, Scopes: scopes }, panel.operator)
      assert.match(lineOf(answer.location, 'error'), reason)
      assert.match((await panel.page(answer.location, panel.operator)).html, /<p class="notice error" role="status">/)
    }
    assert.deepEqual(await scopesOf(), ['chat', 'admin', 'files:read'])

    const revoked = await panel.post(
      '/ProxyAdmin/UserDetail/Scopes',
      { CrmId: crmId, Scopes: 'files:read' },
      panel.operator,
    )
    assert.equal(lineOf(revoked.location, 'notice'), 'Scopes saved: files:read.')
    assert.deepEqual(await scopesOf(), ['files:read'])
    // An operator cannot take the admin scope from themselves.
    const self = await panel.post(
      '/ProxyAdmin/UserDetail/Scopes',
      { CrmId: String(panel.operator.crmId), Scopes: 'chat' },
      panel.operator,
    )
    assert.match(lineOf(self.location, 'error'), /cannot remove your own admin scope/)
    assert.deepEqual(users.scopesOf((await users.get(panel.operator.crmId))!), ['admin'])

    const verified = await panel.post(
      '/ProxyAdmin/UserDetail/ContactVerified',
      { CrmId: crmId, Contact: String(contact.id), Verified: 'true' },
      panel.operator,
    )
    assert.equal(lineOf(verified.location, 'notice'), 'sam@example.com marked verified.')
    assert.equal((await users.contactsOf(user.crm_id))[0]!.flags, ContactFlags.ManuallyAdded | ContactFlags.Verified)
    const after = await panel.page(`/ProxyAdmin/UserDetail?CrmId=${crmId}`, panel.operator)
    assert.match(after.html, /sam@example.com<\/td><td>Verified, ManuallyAdded<\/td>.*Mark unverified/)
    // A contact of another user is not reachable through this user's page.
    const other = await users.create({ name: 'Otto' })
    const wrong = await panel.post(
      '/ProxyAdmin/UserDetail/ContactVerified',
      { CrmId: String(other.crm_id), Contact: String(contact.id), Verified: 'false' },
      panel.operator,
    )
    assert.equal(lineOf(wrong.location, 'error'), 'That contact is not one of this user’s.')
    const unverified = await panel.post(
      '/ProxyAdmin/UserDetail/ContactVerified',
      { CrmId: crmId, Contact: String(contact.id), Verified: 'false' },
      panel.operator,
    )
    assert.equal(lineOf(unverified.location, 'notice'), 'sam@example.com marked unverified.')
    assert.equal((await users.contactsOf(user.crm_id))[0]!.flags, ContactFlags.ManuallyAdded)

    // Shown escaped: a scope name typed into the form is text on the page, never markup.
    const log = tableRows((await panel.page('/ProxyAdmin/Actions', panel.operator)).html).map((row) =>
      row.split(' ').slice(6).join(' ').replaceAll('&quot;', '"').replaceAll('&lt;', '<'),
    )
    assert.deepEqual(log, [
      `contact.verified ${crmId} sam@example.com unverified ok`,
      `contact.verified ${other.crm_id} That contact is not one of this user’s.`,
      `contact.verified ${crmId} sam@example.com verified ok`,
      `user.scopes ${panel.operator.crmId} You cannot remove your own admin scope; ask another operator.`,
      `user.scopes ${crmId} files:read ok`,
      `user.scopes ${crmId} Invalid scope "${'x'.repeat(65)}": letters, digits and : . _ - only, at most 64.`,
      `user.scopes ${crmId} Invalid scope "ad<min>": letters, digits and : . _ - only, at most 64.`,
      `user.scopes ${crmId} chat admin files:read ok`,
    ])
  },
)

forEachDialect(
  'an operator adds an email address and a phone number to a user and removes one; taken and malformed ones are refused',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const { users } = panel.store
    const sam = await users.create({ name: 'Sam' })
    const otto = await users.create({ name: 'Otto' })
    await users.addContact(otto.crm_id, ContactKind.Email, 'otto@example.com')
    const crmId = String(sam.crm_id)
    const add = (Contact: string, Verified?: string) =>
      panel.post(
        '/ProxyAdmin/UserDetail/AddContact',
        { CrmId: crmId, Contact, ...(Verified && { Verified }) },
        panel.operator,
      )

    const page = await panel.page(`/ProxyAdmin/UserDetail?CrmId=${crmId}`, panel.operator)
    assert.match(page.html, /<form class="filters" method="post" action="\/ProxyAdmin\/UserDetail\/AddContact">/)
    assert.equal(
      lineOf((await add(' Sam@Example.COM ', 'true')).location, 'notice'),
      'sam@example.com added, verified.',
    )
    assert.equal(lineOf((await add('0049 151 1234-5678')).location, 'notice'), '+4915112345678 added.')
    const refusals: [string, string][] = [
      ['sam@example.com', 'sam@example.com belongs to this user already.'],
      ['OTTO@example.com', `otto@example.com belongs to user ${otto.crm_id} already.`],
      ['not an address', '"not an address" is neither an email address nor a phone number (+ and 8 to 15 digits).'],
      ['+12', '"+12" is neither an email address nor a phone number (+ and 8 to 15 digits).'],
    ]
    for (const [typed, error] of refusals) assert.equal(lineOf((await add(typed)).location, 'error'), error, typed)
    const unknownUser = await panel.post(
      '/ProxyAdmin/UserDetail/AddContact',
      { CrmId: '4242', Contact: 'new@example.com' },
      panel.operator,
    )
    assert.equal(lineOf(unknownUser.location, 'error'), 'No such user.')

    const contacts = await users.contactsOf(sam.crm_id)
    assert.deepEqual(
      contacts.map((contact) => [contact.kind, contact.value, contact.flags]),
      [
        [ContactKind.Email, 'sam@example.com', ContactFlags.ManuallyAdded | ContactFlags.Verified],
        [ContactKind.Phone, '+4915112345678', ContactFlags.ManuallyAdded],
      ],
    )
    // Added by hand, the address signs Sam in: it names him.
    assert.equal((await users.findContact(ContactKind.Email, 'sam@example.com'))?.crm_id, sam.crm_id)

    const phone = contacts[1]!
    // Another user's contact is not removed through this user's page.
    const wrong = await panel.post(
      '/ProxyAdmin/UserDetail/RemoveContact',
      { CrmId: String(otto.crm_id), Contact: String(phone.id) },
      panel.operator,
    )
    assert.equal(lineOf(wrong.location, 'error'), 'That contact is not one of this user’s.')
    const removed = await panel.post(
      '/ProxyAdmin/UserDetail/RemoveContact',
      { CrmId: crmId, Contact: String(phone.id) },
      panel.operator,
    )
    assert.equal(
      lineOf(removed.location, 'notice'),
      '+4915112345678 removed; the user no longer signs in with it (their sessions stay).',
    )
    assert.deepEqual(
      (await users.contactsOf(sam.crm_id)).map((contact) => contact.value),
      ['sam@example.com'],
    )
    assert.equal(await users.findContact(ContactKind.Phone, '+4915112345678'), undefined)

    const log = tableRows((await panel.page('/ProxyAdmin/Actions', panel.operator)).html).map((row) =>
      row.split(' ').slice(6).join(' ').replaceAll('&quot;', '"'),
    )
    assert.deepEqual(log.slice(0, 3), [
      `contact.remove ${crmId} +4915112345678 ok`,
      `contact.remove ${otto.crm_id} That contact is not one of this user’s.`,
      'contact.add 4242 No such user.',
    ])
    assert.equal(log.at(-1), `contact.add ${crmId} sam@example.com, verified ok`)
  },
)

forEachDialect(
  'scope and contact actions refuse a non-operator and a cross-origin form, and change nothing',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const { users } = panel.store
    const contact = await users.addContact(panel.member.crmId, ContactKind.Email, 'mel@example.com')
    const crmId = String(panel.member.crmId)
    const actions: [string, Record<string, string>][] = [
      ['/ProxyAdmin/UserDetail/Scopes', { CrmId: crmId, Scopes: 'admin' }],
      ['/ProxyAdmin/UserDetail/ContactVerified', { CrmId: crmId, Contact: String(contact.id), Verified: 'true' }],
      ['/ProxyAdmin/UserDetail/AddContact', { CrmId: crmId, Contact: 'mel@other.example' }],
      ['/ProxyAdmin/UserDetail/RemoveContact', { CrmId: crmId, Contact: String(contact.id) }],
    ]
    await assertActionsRefused(panel, actions)
    assert.deepEqual(
      (await users.contactsOf(panel.member.crmId)).map((row) => row.value),
      ['mel@example.com'],
    )
    assert.deepEqual(users.scopesOf((await users.get(panel.member.crmId))!), [])
    assert.equal((await users.contactsOf(panel.member.crmId))[0]!.flags, ContactFlags.ManuallyAdded)
    assert.equal((await panel.page('/ProxyAdmin/Actions', panel.operator)).html.includes('<tbody>'), false)
  },
)
