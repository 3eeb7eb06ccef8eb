import assert from 'node:assert/strict'
import { ContactFlags } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { nextLink, startPanel, tableRows } from '../../test/admin.ts'
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
