import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { sessionCookieOf, startSignInWorld } from '../../test/sign-in.ts'
import { createClock } from '../../test/support.ts'

const NAME = 'atrium_session'

forEachDialect(
  'session fixation: a cookie planted before sign-in is not adopted and is revoked',
  async (t, dialect) => {
    const world = await startSignInWorld(t, dialect)
    // The attacker holds a real session and plants its cookie in the victim's browser.
    const attacker = await world.signIn('attacker@example.com')
    const unknownPlant = `${NAME}=planted-token-the-server-never-issued-000`

    for (const planted of [attacker.cookie, unknownPlant]) {
      const victim = await world.signIn('victim@example.com', { cookie: planted })
      assert.notEqual(victim.cookie, planted, 'the post-login cookie differs from the planted one')
      const asPlanted = await fetch(`${world.url}/auth/v1/session`, { headers: { cookie: planted } })
      assert.equal(asPlanted.status, 401, 'the planted cookie does not carry the new sign-in')
      const asVictim = await json(await fetch(`${world.url}/auth/v1/session`, { headers: { cookie: victim.cookie } }))
      assert.equal(asVictim.result.crmId, victim.user.crmId)
    }
  },
)

forEachDialect('session fixation through the magic link: the planted cookie is not adopted', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const attacker = await world.signIn('attacker@example.com')
  const { token } = await world.startEmail('victim@example.com')

  const opened = await world.post('/auth/v1/magic', { token }, { cookie: `theme=dark; ${attacker.cookie}` })

  assert.equal(opened.status, 200)
  const victimCookie = sessionCookieOf(opened, NAME)
  assert.ok(victimCookie && victimCookie !== attacker.cookie, 'a new session id is set')
  const asPlanted = await fetch(`${world.url}/auth/v1/session`, { headers: { cookie: attacker.cookie } })
  assert.equal(asPlanted.status, 401, 'the planted session was ended, not upgraded')
  const asVictim = await json(await fetch(`${world.url}/auth/v1/session`, { headers: { cookie: victimCookie } }))
  assert.notEqual(asVictim.result.crmId, attacker.user.crmId)
  const rows = await world.store.db.selectFrom('sessions').select('id').execute()
  assert.equal(rows.length, 1, 'only the victim’s new session exists')
})

forEachDialect('every sign-in makes a new session id, even for the same user and browser', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const first = await world.signIn('same@example.com')
  const second = await world.signIn('same@example.com', { cookie: first.cookie })
  assert.notEqual(first.cookie, second.cookie)
  assert.notEqual(first.csrf, second.csrf)
  assert.equal(first.user.crmId, second.user.crmId)
  assert.equal((await fetch(`${world.url}/auth/v1/session`, { headers: { cookie: first.cookie } })).status, 401)
})

forEachDialect(
  'GET /auth/v1/session is 401 when anonymous and clears an unknown or expired cookie',
  async (t, dialect) => {
    const clock = createClock()
    const world = await startSignInWorld(t, dialect, { now: clock.now, settings: { Sessions: { IdleSeconds: 600 } } })
    const anonymous = await fetch(`${world.url}/auth/v1/session`)
    assert.equal(anonymous.status, 401)
    assert.equal((await json(anonymous)).error.code, errorCodes.SessionRequired.code)
    assert.deepEqual(anonymous.headers.getSetCookie(), [], 'no cookie, nothing to clear')

    const unknown = await fetch(`${world.url}/auth/v1/session`, { headers: { cookie: `${NAME}=${'x'.repeat(43)}` } })
    assert.deepEqual(unknown.headers.getSetCookie(), [`${NAME}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`])

    const { cookie } = await world.signIn('idle@example.com')
    clock.advance(600_000)
    const expired = await fetch(`${world.url}/auth/v1/health`, { headers: { cookie } })
    assert.equal(expired.status, 200, 'a stale cookie still reaches public pages')
    assert.match(expired.headers.getSetCookie()[0] ?? '', /^atrium_session=; .*Max-Age=0/)
  },
)

forEachDialect('logout ends this session only and clears the cookie', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const laptop = await world.signIn('multi@example.com')
  const phone = await world.signIn('multi@example.com')

  const response = await world.post('/auth/v1/logout', {}, { cookie: laptop.cookie, 'x-csrf-token': laptop.csrf })
  assert.equal(response.status, 200)
  assert.deepEqual((await json(response)).result, { sessions: 1 })
  assert.match(response.headers.getSetCookie()[0] ?? '', /^atrium_session=; .*Max-Age=0/)
  assert.equal((await fetch(`${world.url}/auth/v1/session`, { headers: { cookie: laptop.cookie } })).status, 401)
  assert.equal((await fetch(`${world.url}/auth/v1/session`, { headers: { cookie: phone.cookie } })).status, 200)
})

forEachDialect('logout_all ends every session of the user and no one else', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const a = await world.signIn('everywhere@example.com')
  const b = await world.signIn('everywhere@example.com')
  const other = await world.signIn('someone-else@example.com')

  const response = await world.post('/auth/v1/logout_all', {}, { cookie: b.cookie, 'x-csrf-token': b.csrf })
  assert.deepEqual((await json(response)).result, { sessions: 2 })
  for (const { cookie } of [a, b]) {
    assert.equal((await fetch(`${world.url}/auth/v1/session`, { headers: { cookie } })).status, 401)
  }
  assert.equal((await fetch(`${world.url}/auth/v1/session`, { headers: { cookie: other.cookie } })).status, 200)
})

forEachDialect('logout without a session answers SessionRequired', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const response = await world.post('/auth/v1/logout', {})
  assert.equal(response.status, 401)
  assert.equal((await json(response)).error.code, errorCodes.SessionRequired.code)
  assert.equal(sessionCookieOf(response, NAME), undefined)
})
