import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { createClock, startGateway } from '../../test/support.ts'

const limits = { IdleSeconds: 600, AbsoluteSeconds: 3600, MaxPerUser: 3 }
const session = (crmId: number) => ({ crmId, method: 'email_otp', ip: '127.0.0.1', userAgent: 'test' })

forEachDialect('a session expires exactly at its idle lifetime', async (t, dialect) => {
  const clock = createClock()
  const { store } = await startGateway(t, dialect, { settings: { Sessions: limits }, now: clock.now })
  const user = await store.users.create()
  const { token } = await store.sessions.create(session(user.crm_id))
  clock.advance(600_000 - 1)
  assert.ok(await store.sessions.resolve(token), 'one millisecond before the idle limit it is live')
  clock.advance(600_000 - 1)
  assert.ok(await store.sessions.resolve(token), 'each use restarts the idle time')
  clock.advance(600_000)
  assert.equal(await store.sessions.resolve(token), undefined, 'at the idle limit it is refused')
  const rows = await store.db.selectFrom('sessions').select('id').execute()
  assert.deepEqual(rows, [], 'an expired session is deleted when seen')
})

forEachDialect('a session expires exactly at its absolute lifetime, however active', async (t, dialect) => {
  const clock = createClock()
  const { store } = await startGateway(t, dialect, { settings: { Sessions: limits }, now: clock.now })
  const { token } = await store.sessions.create(session(1))
  for (let elapsed = 0; elapsed < 3_600_000 - 1; elapsed += 500_000) {
    clock.advance(Math.min(500_000, 3_600_000 - 1 - elapsed))
    assert.ok(await store.sessions.resolve(token))
  }
  clock.advance(1)
  assert.equal(await store.sessions.resolve(token), undefined)
})

forEachDialect('the per-user limit keeps the newest sessions: limit-1, limit, limit+1', async (t, dialect) => {
  const clock = createClock()
  const { store } = await startGateway(t, dialect, { settings: { Sessions: limits }, now: clock.now })
  const tokens: string[] = []
  for (let i = 0; i < 4; i++) {
    clock.advance(1)
    tokens.push((await store.sessions.create(session(7))).token)
    const live = await store.sessions.list(7)
    assert.equal(live.length, Math.min(i + 1, 3), `after ${i + 1} sign-ins`)
  }
  assert.equal(await store.sessions.resolve(tokens[0]!), undefined, 'the oldest session ended at limit+1')
  for (const token of tokens.slice(1)) assert.ok(await store.sessions.resolve(token))
  assert.equal((await store.sessions.create(session(8))).session.crm_id, 8, 'other users are not affected')
  assert.equal((await store.sessions.list(7)).length, 3)
})

forEachDialect('an app signing in with AppLogin again and again keeps only its newest sessions', async (t, dialect) => {
  const clock = createClock()
  const { store } = await startGateway(t, dialect, { settings: { Sessions: limits }, now: clock.now })
  const appSession = (appId: number) => ({ crmId: 0, appId, method: 'app_login', ip: '127.0.0.1', userAgent: 'test' })
  const tokens: string[] = []
  for (let i = 0; i < 5; i++) {
    clock.advance(1)
    tokens.push((await store.sessions.create(appSession(41))).token)
  }
  const other = await store.sessions.create(appSession(42))
  const user = await store.sessions.create(session(7))
  const live = await Promise.all(tokens.map((token) => store.sessions.resolve(token)))
  assert.deepEqual(
    live.map((found) => found !== undefined),
    [false, false, true, true, true],
    'the two oldest of five ended',
  )
  assert.ok(await store.sessions.resolve(other.token), 'another app is not affected')
  assert.ok(await store.sessions.resolve(user.token), 'users are not affected')
})

forEachDialect('the sweep deletes expired sessions and keeps live ones', async (t, dialect) => {
  const clock = createClock()
  const { store } = await startGateway(t, dialect, { settings: { Sessions: limits }, now: clock.now })
  const old = await store.sessions.create(session(1))
  clock.advance(300_000)
  const fresh = await store.sessions.create(session(2))
  clock.advance(300_000)
  assert.equal(await store.sessions.sweep(), 1)
  assert.equal(await store.sessions.resolve(old.token), undefined)
  assert.ok(await store.sessions.resolve(fresh.token))
})

forEachDialect(
  'a session resolved from memory is still refused once revoked or removed elsewhere',
  async (t, dialect) => {
    const clock = createClock()
    const { store } = await startGateway(t, dialect, { settings: { Sessions: limits }, now: clock.now })
    const one = await store.sessions.create(session(1))
    const two = await store.sessions.create(session(2))
    const three = await store.sessions.create(session(3))
    for (const { token } of [one, two, three]) assert.ok(await store.sessions.resolve(token), 'resolved, now in memory')

    await store.sessions.revoke(one.session.id)
    assert.equal(await store.sessions.resolve(one.token), undefined, 'revoked on this instance: refused at once')
    assert.equal(await store.sessions.resolve(one.token), undefined, 'and stays refused')
    assert.equal(await store.sessions.revokeAll(2), 1)
    assert.equal(await store.sessions.resolve(two.token), undefined, 'all of a user revoked: refused at once')

    // Another instance removes the third: this one reads it again within the 5 s it trusts its copy.
    await store.db.deleteFrom('sessions').where('id', '=', three.session.id).execute()
    clock.advance(5_000)
    assert.equal(await store.sessions.resolve(three.token), undefined, 'removed elsewhere: refused after 5 s')
    assert.equal(await store.sessions.resolve(three.token), undefined)
  },
)

forEachDialect(
  'a cached session resolves at once; reading, writing its last use or deleting it takes a promise',
  async (t, dialect) => {
    const clock = createClock()
    const { store } = await startGateway(t, dialect, { settings: { Sessions: limits }, now: clock.now })
    const { token, session: created } = await store.sessions.create(session(5))
    // Created here, so cached: the proxy and static paths take no microtask for it.
    const cached = store.sessions.resolve(token)
    assert.ok(!(cached instanceof Promise), 'a cached session is answered without a promise')
    assert.equal(cached?.id, created.id)
    // Idle 600 s: its last use is written at most once a minute (a tenth of it), with a promise.
    clock.advance(60_000)
    const touched = store.sessions.resolve(token)
    assert.ok(touched instanceof Promise, 'a due write of the last use is awaited')
    assert.equal((await touched)?.id, created.id)
    const [row] = await store.db.selectFrom('sessions').select('last_seen').execute()
    assert.equal(row?.last_seen, created.created + 60_000, 'the write happened')
    assert.ok(!(store.sessions.resolve(token) instanceof Promise), 'then it is answered at once again')
    // Past the cache's trust (5 s) without a use, it is read again; expired, deleted.
    clock.advance(599_999)
    const read = store.sessions.resolve(token)
    assert.ok(read instanceof Promise, 'a session cached too long is read again')
    assert.equal((await read)?.id, created.id)
    clock.advance(600_000)
    assert.equal(await store.sessions.resolve(token), undefined)
    assert.equal(store.sessions.resolve('x'.repeat(10)), undefined, 'a malformed token is refused at once')
  },
)
