import assert from 'node:assert/strict'
import { ContactFlags, errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { sessionCookieOf, startSignInWorld } from '../../test/sign-in.ts'
import { createClock } from '../../test/support.ts'
import { ContactKind } from '../users/users.repository.ts'

const OTP = { CodeTtlSeconds: 600, MaxAttempts: 5, MaxChallengesPerTargetPerHour: 5 }

forEachDialect('an emailed code signs in, sets the cookie and marks the address verified', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const { challengeId, code } = await world.startEmail('Alice@Example.com', { returnTo: '/chat/c/42?tab=files' })

  const response = await world.post('/auth/v1/email/verify', { challengeId, code })

  const body = await json(response)
  assert.equal(response.status, 200, JSON.stringify(body))
  assert.match(body.result.user.crmId, /^[1-9][0-9]*$/)
  assert.deepEqual(body.result.user.contacts, [
    { kind: 'email', value: 'alice@example.com', verified: true, manuallyAdded: false },
  ])
  assert.equal(body.result.returnTo, '/chat/c/42?tab=files')
  assert.ok(body.result.csrf.length >= 20)
  const setCookie = response.headers.getSetCookie()[0]!
  assert.match(setCookie, /^atrium_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/)
  const contact = await world.store.users.findContact(ContactKind.Email, 'alice@example.com')
  assert.equal(contact?.flags, ContactFlags.Verified)

  const session = await fetch(`${world.url}/auth/v1/session`, {
    headers: { cookie: sessionCookieOf(response, 'atrium_session')! },
  })
  const info = (await json(session)).result
  assert.equal(info.crmId, body.result.user.crmId)
  assert.equal(info.keyType, 'session')
  assert.equal(info.csrf, body.result.csrf)
})

forEachDialect('the magic link signs in once, by posting its token', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { PublicOrigin: 'https://atrium.example' } })
  const { link, token } = await world.startEmail('bob@example.com', { returnTo: '/chat/' })
  assert.ok(link.startsWith('https://atrium.example/auth/v1/magic?token='), link)

  const first = await world.post('/auth/v1/magic', { token })
  const body = await json(first)
  assert.equal(first.status, 200, JSON.stringify(body))
  assert.equal(body.result.returnTo, '/chat/')
  assert.deepEqual(body.result.user.contacts, [
    { kind: 'email', value: 'bob@example.com', verified: true, manuallyAdded: false },
  ])
  assert.match(first.headers.getSetCookie()[0]!, /^atrium_session=.+; HttpOnly; SameSite=Lax; Secure; Max-Age=/)

  const replay = await world.post('/auth/v1/magic', { token })
  assert.equal(replay.status, 401)
  assert.equal((await json(replay)).error.code, errorCodes.ChallengeExpired.code)
  assert.deepEqual(replay.headers.getSetCookie(), [])
})

forEachDialect('a code and its link die together: the code after the link is refused', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const { challengeId, code, token } = await world.startEmail('carol@example.com')
  assert.equal((await world.post('/auth/v1/magic', { token })).status, 200)

  const response = await world.post('/auth/v1/email/verify', { challengeId, code })
  assert.equal(response.status, 401)
  assert.equal((await json(response)).error.code, errorCodes.ChallengeExpired.code)
})

forEachDialect('a used code fails on replay', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const { challengeId, code, token } = await world.startEmail('dave@example.com')
  assert.equal((await world.post('/auth/v1/email/verify', { challengeId, code })).status, 200)

  const replay = await world.post('/auth/v1/email/verify', { challengeId, code })
  assert.equal(replay.status, 401)
  assert.equal((await json(replay)).error.code, errorCodes.ChallengeExpired.code)
  const link = await world.post('/auth/v1/magic', { token })
  assert.equal(link.status, 401, 'the link of a used code is dead too')
})

forEachDialect('a wrong code counts an attempt and says how many are left', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { Otp: OTP } })
  const { challengeId, code } = await world.startEmail('erin@example.com')
  const wrong = code === '000000' ? '000001' : '000000'

  const response = await world.post('/auth/v1/email/verify', { challengeId, code: wrong })

  const body = await json(response)
  assert.equal(response.status, 401)
  assert.equal(body.error.code, errorCodes.InvalidCredentials.code)
  assert.match(body.error.message, /4 attempts left/)
  const row = await world.store.db
    .selectFrom('login_challenges')
    .selectAll()
    .where('id', '=', Number(challengeId))
    .executeTakeFirstOrThrow()
  assert.equal(row.attempts, 1)
  assert.notEqual(row.secret_hash, code, 'the code is stored hashed')
  assert.doesNotMatch(row.secret_hash, new RegExp(code))
})

forEachDialect('attempt limit: limit-1 wrong codes then the right one signs in', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { Otp: OTP } })
  const { challengeId, code } = await world.startEmail('frank@example.com')
  const wrong = code === '111111' ? '222222' : '111111'
  for (let i = 0; i < OTP.MaxAttempts - 1; i++) {
    assert.equal((await world.post('/auth/v1/email/verify', { challengeId, code: wrong })).status, 401)
  }
  assert.equal((await world.post('/auth/v1/email/verify', { challengeId, code })).status, 200)
})

forEachDialect(
  'attempt limit: limit wrong codes end the challenge; the right code then fails (brute force)',
  async (t, dialect) => {
    const world = await startSignInWorld(t, dialect, { settings: { Otp: OTP } })
    const { challengeId, code, token } = await world.startEmail('grace@example.com')
    const guesses = ['000000', '111111', '222222', '333333', '444444', '555555'].filter((guess) => guess !== code)
    const answers = await Promise.all(
      guesses
        .slice(0, OTP.MaxAttempts)
        .map((guess) => world.post('/auth/v1/email/verify', { challengeId, code: guess })),
    )
    const codes = await Promise.all(answers.map(async (answer) => (await json(answer)).error.code))
    assert.equal(codes.filter((c) => c === errorCodes.InvalidCredentials.code).length, OTP.MaxAttempts - 1)
    assert.equal(codes.filter((c) => c === errorCodes.ChallengeExpired.code).length, 1, 'the last guess ends it')

    const right = await world.post('/auth/v1/email/verify', { challengeId, code })
    assert.equal(right.status, 401)
    assert.equal((await json(right)).error.code, errorCodes.ChallengeExpired.code)
    assert.equal((await world.post('/auth/v1/magic', { token })).status, 401, 'the ended challenge’s link is dead too')
  },
)

forEachDialect('a code expires exactly at creation + CodeTtlSeconds', async (t, dialect) => {
  const clock = createClock()
  const world = await startSignInWorld(t, dialect, { settings: { Otp: OTP }, now: clock.now })
  const early = await world.startEmail('heidi@example.com')
  clock.advance(OTP.CodeTtlSeconds * 1000 - 1)
  assert.equal(
    (await world.post('/auth/v1/email/verify', { challengeId: early.challengeId, code: early.code })).status,
    200,
  )

  const late = await world.startEmail('ivan@example.com')
  clock.advance(OTP.CodeTtlSeconds * 1000)
  const response = await world.post('/auth/v1/email/verify', { challengeId: late.challengeId, code: late.code })
  assert.equal(response.status, 401)
  assert.equal((await json(response)).error.code, errorCodes.ChallengeExpired.code)
  const link = await world.post('/auth/v1/magic', { token: late.token })
  assert.equal(link.status, 401, 'the link expires at the same time')
})

forEachDialect('start answers alike for known and unknown addresses (no enumeration)', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  await world.store.users.userForContact(ContactKind.Email, 'known@example.com', ContactFlags.Verified)

  const known = await world.post('/auth/v1/email/start', { email: 'known@example.com' })
  const unknown = await world.post('/auth/v1/email/start', { email: 'unknown@example.com' })

  assert.equal(known.status, unknown.status)
  const [a, b] = [(await json(known)).result, (await json(unknown)).result]
  assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort())
  assert.equal(a.expiresAt - Number(0), a.expiresAt)
  assert.ok(world.mailTo('known@example.com') && world.mailTo('unknown@example.com'), 'both get a mail')
  assert.equal(
    await world.store.users.findContact(ContactKind.Email, 'unknown@example.com'),
    undefined,
    'nobody is created before the code is proven',
  )
})

forEachDialect('codes per address per hour are limited; the next hour allows more', async (t, dialect) => {
  const clock = createClock()
  const world = await startSignInWorld(t, dialect, {
    settings: { Otp: { ...OTP, MaxChallengesPerTargetPerHour: 2 } },
    now: clock.now,
  })
  assert.equal((await world.post('/auth/v1/email/start', { email: 'judy@example.com' })).status, 200)
  assert.equal((await world.post('/auth/v1/email/start', { email: 'judy@example.com' })).status, 200)

  const third = await world.post('/auth/v1/email/start', { email: 'JUDY@example.com' })
  assert.equal(third.status, 429)
  assert.equal((await json(third)).error.code, errorCodes.RateLimited.code)
  assert.equal(world.smtp.received.length, 2, 'no third mail')
  assert.equal((await world.post('/auth/v1/email/start', { email: 'other@example.com' })).status, 200)

  clock.advance(3_600_000)
  assert.equal((await world.post('/auth/v1/email/start', { email: 'judy@example.com' })).status, 200)
})

forEachDialect(
  'bad start input is refused before any mail: address, return address, extra fields',
  async (t, dialect) => {
    const world = await startSignInWorld(t, dialect)
    const cases: [object, number][] = [
      [{ email: 'not-an-address' }, errorCodes.InvalidRequest.code],
      [{ email: 'a@example.com', returnTo: 'https://evil.example/' }, errorCodes.InvalidReturnAddress.code],
      [{ email: 'a@example.com', returnTo: '//evil.example' }, errorCodes.InvalidReturnAddress.code],
      [{ email: 'a@example.com', admin: true }, errorCodes.InvalidRequest.code],
      [{ email: 'a@example.com', client: { screen: 'x'.repeat(33) } }, errorCodes.InvalidRequest.code],
    ]
    for (const [body, code] of cases) {
      const response = await world.post('/auth/v1/email/start', body)
      assert.equal((await json(response)).error?.code, code, JSON.stringify(body))
    }
    assert.equal(world.smtp.received.length, 0)
  },
)

forEachDialect('a challenge id from the phone flow or an unknown id is refused', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const response = await world.post('/auth/v1/email/verify', { challengeId: '123456789', code: '123456' })
  assert.equal((await json(response)).error.code, errorCodes.ChallengeExpired.code)
})

forEachDialect('the sweep removes challenges that are expired and older than an hour', async (t, dialect) => {
  const clock = createClock()
  const world = await startSignInWorld(t, dialect, { now: clock.now })
  await world.startEmail('kim@example.com')
  clock.advance(3_600_000 - 1)
  await world.startEmail('kim@example.com')
  const count = async () => (await world.store.db.selectFrom('login_challenges').select('id').execute()).length
  assert.equal(await count(), 4, 'a code and a link per start')
  clock.advance(1)
  const { createChallenges } = await import('./challenges.repository.ts')
  const challenges = createChallenges(world.store.db, world.store.nextTick, world.config.Otp, {
    codeKey: 'k',
    now: clock.now,
  })
  assert.equal(await challenges.sweep(), 2)
  assert.equal(await count(), 2)
})
