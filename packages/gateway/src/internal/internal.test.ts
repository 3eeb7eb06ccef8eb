import assert from 'node:assert/strict'
import { ContactFlags, errorCodes, signedHeaders } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { SERVICE_SECRET, startGateway } from '../../test/support.ts'
import { ContactKind } from '../users/users.repository.ts'

forEachDialect('a module reads a user with contacts and scopes over a signed call', async (t, dialect) => {
  const { url, store } = await startGateway(t, dialect)
  const { user } = await store.users.userForContact(ContactKind.Email, 'ann@example.com', ContactFlags.Verified)
  await store.users.setScopes(user.crm_id, ['chat', 'admin'])
  await store.users.addContact(user.crm_id, ContactKind.Phone, '+491701234567')
  const path = `/private/v1/users/${user.crm_id}`

  const response = await fetch(`${url}${path}`, { headers: signedHeaders(SERVICE_SECRET, 'GET', path) })

  const body = await json(response)
  assert.equal(response.status, 200, JSON.stringify(body))
  assert.deepEqual(body.result.user, {
    crmId: String(user.crm_id),
    name: '',
    scopes: ['chat', 'admin'],
    contacts: [
      { kind: 'email', value: 'ann@example.com', verified: true, manuallyAdded: false },
      { kind: 'phone', value: '+491701234567', verified: false, manuallyAdded: true },
    ],
  })
  const missing = '/private/v1/users/42'
  const unknown = await fetch(`${url}${missing}`, { headers: signedHeaders(SERVICE_SECRET, 'GET', missing) })
  assert.equal(unknown.status, 404)
})

forEachDialect(
  '/private refuses every unsigned, wrongly signed or replayed-elsewhere call with 401',
  async (t, dialect) => {
    const { url, store } = await startGateway(t, dialect)
    const user = await store.users.create({ scopes: ['admin'] })
    const path = `/private/v1/users/${user.crm_id}`
    const { token } = await store.sessions.create({ crmId: user.crm_id, method: 't', ip: '', userAgent: '' })
    const attempts: [string, string, Record<string, string>][] = [
      ['no signature', path, {}],
      ['a signed-in admin cookie', path, { cookie: `atrium_session=${token}` }],
      ['a signature made with another secret', path, signedHeaders('another-secret'.padEnd(40, 'x'), 'GET', path)],
      ['a signature for another path', path, signedHeaders(SERVICE_SECRET, 'GET', '/private/v1/users/1')],
      ['a garbage signature', path, { 'x-service-auth': 'v1.1.abc' }],
      ['an unknown private path', '/private/v1/events', {}],
      ['the prefix itself', '/private', {}],
      ['a traversal attempt', '/private/../private/v1/users/1', {}],
      ['an encoded path', '/private/v1/users/%31', {}],
    ]
    for (const [name, target, headers] of attempts) {
      const response = await fetch(`${url}${target}`, { headers })
      assert.equal(response.status, 401, name)
      assert.equal((await json(response)).error.code, errorCodes.Unauthenticated.code, name)
    }
    const posted = await fetch(`${url}/private/v1/SendOTP`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(posted.status, 401, 'POSTs under /private are refused alike')

    const signedUnknown = '/private/v1/whatever'
    const found = await fetch(`${url}${signedUnknown}`, {
      headers: signedHeaders(SERVICE_SECRET, 'GET', signedUnknown),
    })
    assert.equal(found.status, 404, 'only a signed caller learns that a path does not exist')
  },
)
