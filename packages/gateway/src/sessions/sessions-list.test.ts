import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startGateway } from '../../test/support.ts'

forEachDialect('a user lists their signed-in devices and ends one of them remotely', async (t, dialect) => {
  const gateway = await startGateway(t, dialect)
  const { store, config, url } = gateway
  const cookieName = config.Sessions.CookieName
  const user = await store.users.create()
  const other = await store.users.create()
  const signIn = async (crmId: number, method: string, userAgent: string) => {
    const { token, session } = await store.sessions.create({ crmId, method, ip: '192.0.2.7', userAgent })
    return { cookie: `${cookieName}=${token}`, csrf: session.csrf }
  }
  const laptop = await signIn(user.crm_id, 'passkey', 'Laptop browser')
  const phone = await signIn(user.crm_id, 'email_otp', 'Phone browser')
  const stranger = await signIn(other.crm_id, 'email_otp', 'Somebody else')
  const call = async (method: string, path: string, as: { cookie: string; csrf: string }) => {
    const response = await fetch(`${url}${path}`, { method, headers: { cookie: as.cookie, 'x-csrf-token': as.csrf } })
    return { status: response.status, body: await json(response), cookies: response.headers.getSetCookie() }
  }

  const listed = await call('GET', '/auth/v1/sessions', laptop)
  assert.equal(listed.status, 200)
  const sessions = listed.body.result.sessions as { id: string; method: string; userAgent: string; current: boolean }[]
  assert.deepEqual(sessions.map((session) => [session.method, session.userAgent, session.current]).sort(), [
    ['email_otp', 'Phone browser', false],
    ['passkey', 'Laptop browser', true],
  ])
  // The ids shown are neither the tokens nor the stored keys.
  const stored = await store.db.selectFrom('sessions').select('id').execute()
  for (const session of sessions) {
    assert.match(session.id, /^[0-9a-f]{16}$/)
    assert.ok(!stored.some((row) => row.id.startsWith(session.id)))
  }
  const phoneId = sessions.find((session) => !session.current)!.id

  // Somebody else cannot end it; its owner can, from the laptop, and the phone is signed out.
  assert.equal((await call('DELETE', `/auth/v1/sessions/${phoneId}`, stranger)).status, 404)
  assert.equal((await call('GET', '/auth/v1/session', phone)).status, 200)
  const ended = await call('DELETE', `/auth/v1/sessions/${phoneId}`, laptop)
  assert.deepEqual(ended.body.result, { sessions: 1 })
  assert.deepEqual(ended.cookies, [], 'ending another session keeps this one’s cookie')
  const phoneNow = await call('GET', '/auth/v1/session', phone)
  assert.equal(phoneNow.status, 401)
  assert.equal(phoneNow.body.error.code, errorCodes.SessionRequired.code)
  assert.equal((await call('GET', '/auth/v1/session', laptop)).status, 200)

  // Ending the current session signs this browser out, cookie included.
  const laptopId = sessions.find((session) => session.current)!.id
  const self = await call('DELETE', `/auth/v1/sessions/${laptopId}`, laptop)
  assert.equal(self.status, 200)
  assert.match(self.cookies[0] ?? '', /Max-Age=0/)
  assert.equal((await call('GET', '/auth/v1/session', laptop)).status, 401)
})

forEachDialect('the session list needs a user session: not an API key, not signed out', async (t, dialect) => {
  const gateway = await startGateway(t, dialect)
  const user = await gateway.store.users.create()
  const { key } = await gateway.store.apiKeys.create({
    keyType: 'user',
    crmId: user.crm_id,
    appId: 0,
    scopes: [],
    name: 'k',
  })
  const withKey = await fetch(`${gateway.url}/auth/v1/sessions`, { headers: { authorization: `Bearer ${key}` } })
  assert.equal(withKey.status, 401)
  assert.equal((await json(withKey)).error.code, errorCodes.SessionRequired.code)
  assert.equal((await fetch(`${gateway.url}/auth/v1/sessions`)).status, 401)
})
