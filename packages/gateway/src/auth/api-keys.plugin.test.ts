import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, errorCodes } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, json, listen } from '@atrium/platform/testing'
import { capturedLog, SERVICE_SECRET } from '../../test/support.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'
import { apiKeyParts } from './api-keys.repository.ts'

/** A gateway whose every log line is kept, to prove keys never reach the log. */
async function startLogged(t: TestContext, dialect: DatabaseDialect) {
  const { lines, stream } = capturedLog()
  const config = loadGatewayConfig(
    { GatewayDB: await createTestDatabaseUrl(t, dialect), ServiceSecret: SERVICE_SECRET },
    {},
  )
  const app = await buildGateway(config, { logger: { level: 'trace', stream } })
  const url = await listen(t, app)
  const { store } = app

  /** A signed-in user with a cookie session; calls send the cookie and the CSRF token. */
  async function user(scopes: string[] = []) {
    const row = await store.users.create({ scopes })
    const { token, session } = await store.sessions.create({
      crmId: row.crm_id,
      method: 'email_otp',
      ip: '',
      userAgent: '',
    })
    const headers = { cookie: `${config.Sessions.CookieName}=${token}`, 'x-csrf-token': session.csrf }
    return { crmId: row.crm_id, headers, ...callAs(headers) }
  }

  function callAs(headers: Record<string, string>) {
    async function call(method: string, path: string, body?: object) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
        body: body ? JSON.stringify(body) : undefined,
      })
      const answer = await json(response)
      return { status: response.status, result: answer.result, error: answer.error }
    }
    return { call }
  }

  return { url, store, lines, user, callAs }
}

forEachDialect('a user key is shown once, listed by prefix, works, and is refused once revoked', async (t, dialect) => {
  const world = await startLogged(t, dialect)
  const alice = await world.user(['chat', 'wallet'])

  const created = await alice.call('POST', '/auth/v1/keys', { name: 'laptop script', scopes: ['chat'] })
  assert.equal(created.status, 200, JSON.stringify(created.error))
  const { key, apiKey } = created.result
  assert.match(key, /^atr_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{43}$/)
  assert.equal(apiKey.keyType, 'user')
  assert.deepEqual(apiKey.scopes, ['chat'])

  const listed = await alice.call('GET', '/auth/v1/keys')
  assert.deepEqual(
    listed.result.keys.map((k: { id: string }) => k.id),
    [apiKey.id],
  )
  assert.ok(!JSON.stringify(listed).includes(apiKeyParts(key)!.secret), 'the secret is never listed')

  const presentations: Record<string, string>[] = [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }]
  for (const headers of presentations) {
    const info = await world.callAs(headers).call('GET', '/auth/v1/session')
    assert.deepEqual(
      [info.result.crmId, info.result.keyType, info.result.scopes],
      [String(alice.crmId), 'user', ['chat']],
    )
  }

  const revoked = await alice.call('DELETE', `/auth/v1/keys/${apiKey.id}`)
  assert.deepEqual(revoked.result, { revoked: true })
  const refused = await world.callAs({ 'x-api-key': key }).call('GET', '/auth/v1/session')
  assert.equal(refused.status, 401)
  assert.equal(refused.error.code, errorCodes.InvalidCredentials.code)

  const log = world.lines.join('')
  assert.ok(log.includes('API key created'), 'the log was captured')
  assert.ok(!log.includes(apiKeyParts(key)!.secret), 'the key secret is in no log line')
})

forEachDialect('a key may not mint keys, and an app token may not either', async (t, dialect) => {
  const world = await startLogged(t, dialect)
  const alice = await world.user()
  const { key } = (await alice.call('POST', '/auth/v1/keys', { name: 'k' })).result
  const viaKey = await world.callAs({ 'x-api-key': key }).call('POST', '/auth/v1/keys', { name: 'child' })
  assert.equal(viaKey.status, 401)
  assert.equal(viaKey.error.code, errorCodes.SessionRequired.code)
  assert.equal(
    (await world.callAs({ 'x-api-key': key }).call('GET', '/auth/v1/keys')).error.code,
    errorCodes.SessionRequired.code,
  )
  const anonymous = await world.callAs({}).call('POST', '/auth/v1/keys', { name: 'x' })
  assert.equal(anonymous.error.code, errorCodes.SessionRequired.code)
})

forEachDialect('key scopes cannot exceed the creator’s own', async (t, dialect) => {
  const world = await startLogged(t, dialect)
  const alice = await world.user(['chat'])
  const escalation = await alice.call('POST', '/auth/v1/keys', { name: 'k', scopes: ['chat', 'admin'] })
  assert.equal(escalation.status, 403)
  assert.equal(escalation.error.code, errorCodes.Forbidden.code)
  assert.match(escalation.error.message, /admin/)
  assert.deepEqual((await alice.call('GET', '/auth/v1/keys')).result.keys, [])
})

forEachDialect('a service key is made for an owned app only and acts as the app', async (t, dialect) => {
  const world = await startLogged(t, dialect)
  const owner = await world.user()
  const stranger = await world.user()
  const { app } = await world.store.apps.create({ name: 'shop', owner: owner.crmId })

  const refused = await stranger.call('POST', '/auth/v1/keys', { name: 'steal', appId: String(app.id) })
  assert.equal(refused.error.code, errorCodes.Forbidden.code)

  const created = await owner.call('POST', '/auth/v1/keys', { name: 'shop backend', appId: String(app.id) })
  assert.equal(created.result.apiKey.keyType, 'service')
  const info = await world.callAs({ authorization: `Bearer ${created.result.key}` }).call('GET', '/auth/v1/session')
  assert.deepEqual([info.result.crmId, info.result.appId, info.result.keyType], ['0', String(app.id), 'service'])
  assert.equal((await owner.call('GET', '/auth/v1/keys')).result.keys.length, 1)
  assert.equal((await stranger.call('GET', '/auth/v1/keys')).result.keys.length, 0)
})

forEachDialect('only the owner can revoke a key; others get NotFound', async (t, dialect) => {
  const world = await startLogged(t, dialect)
  const alice = await world.user()
  const mallory = await world.user()
  const { key, apiKey } = (await alice.call('POST', '/auth/v1/keys', { name: 'k' })).result

  const attempt = await mallory.call('DELETE', `/auth/v1/keys/${apiKey.id}`)
  assert.equal(attempt.status, 404)
  assert.equal(attempt.error.code, errorCodes.NotFound.code)
  assert.equal((await world.callAs({ 'x-api-key': key }).call('GET', '/auth/v1/session')).status, 200)
  assert.equal((await alice.call('DELETE', '/auth/v1/keys/123')).status, 404)
  assert.equal((await alice.call('DELETE', '/auth/v1/keys/abc')).error.code, errorCodes.InvalidRequest.code)
})
