import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { sessionCookieOf, startSignInWorld } from '../../test/sign-in.ts'
import { startGateway } from '../../test/support.ts'
import { hashSecret } from '../auth/caller.ts'
import { ContactKind } from '../users/users.repository.ts'

const MAX_PER_USER = 3
const PARALLEL = 12
const PARALLEL_APPS = 24

forEachDialect('twelve parallel sign-ins of one user leave MaxPerUser sessions in the database', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, {
    settings: { Sessions: { MaxPerUser: MAX_PER_USER }, Otp: { MaxChallengesPerTargetPerHour: PARALLEL } },
  })
  const email = 'parallel@example.com'
  const tokens: string[] = []
  for (let i = 0; i < PARALLEL; i++) tokens.push((await world.startEmail(email)).token)

  // A magic link consumes only its own challenge and the codes, so all twelve links sign in.
  const answers = await Promise.all(tokens.map((token) => world.post('/auth/v1/magic', { token })))
  const issued = new Set<string>()
  for (const answer of answers) {
    assert.equal(answer.status, 200, JSON.stringify(await json(answer)))
    const cookie = sessionCookieOf(answer, world.config.Sessions.CookieName)
    assert.ok(cookie)
    issued.add(hashSecret(cookie.slice(cookie.indexOf('=') + 1)))
  }
  assert.equal(issued.size, PARALLEL)

  const user = await world.store.users.findContact(ContactKind.Email, email)
  assert.ok(user)
  const stored = await world.store.db.selectFrom('sessions').select(['id', 'crm_id']).execute()
  assert.equal(stored.length, Math.min(PARALLEL, MAX_PER_USER), 'the cap holds under parallel sign-ins')
  for (const row of stored) {
    assert.equal(row.crm_id, user.crm_id)
    assert.ok(issued.has(row.id), 'every kept session is one of those the sign-ins issued')
  }
})

forEachDialect('parallel AppLogins of one app leave MaxPerUser sessions in the database', async (t, dialect) => {
  const { url, store } = await startGateway(t, dialect, { settings: { Sessions: { MaxPerUser: MAX_PER_USER } } })
  const { app, secret } = await store.apps.create({ name: 'shop', owner: 5 })
  const answers = await Promise.all(
    Array.from({ length: PARALLEL_APPS }, () =>
      fetch(`${url}/auth/v1/app/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ appId: String(app.id), secret }),
      }),
    ),
  )
  const issued = new Set<string>()
  for (const answer of answers) {
    const body = await json(answer)
    assert.equal(answer.status, 200, JSON.stringify(body))
    issued.add(hashSecret(body.result.token))
  }
  const stored = await store.db.selectFrom('sessions').select(['id', 'app_id']).execute()
  assert.equal(stored.length, Math.min(issued.size, MAX_PER_USER))
  for (const row of stored) {
    assert.equal(row.app_id, app.id)
    assert.ok(issued.has(row.id))
  }
})
