import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startSignInWorld } from '../../test/sign-in.ts'
import { startPhoneWorld } from '../../test/sms-inbox.ts'
import { createClock } from '../../test/support.ts'

// Guessing and replaying sign-in codes and links, beyond the email-code boundaries that
// email-sign-in.test.ts covers: the phone flow, concurrent floods, link guessing, start limits.

const OTP = { CodeTtlSeconds: 600, MaxAttempts: 5, MaxChallengesPerTargetPerHour: 5 }

/** Six-digit codes other than `code`, as many as asked. */
function wrongCodes(code: string, count: number): string[] {
  const codes: string[] = []
  for (let n = 0; codes.length < count; n++) {
    const guess = String((n * 104_729 + 7) % 1_000_000).padStart(6, '0')
    if (guess !== code) codes.push(guess)
  }
  return codes
}

forEachDialect('phone code attempt limit: limit−1 wrong codes leave the right one working', async (t, dialect) => {
  const world = await startPhoneWorld(t, dialect, { settings: { Otp: OTP } })
  const start = await world.post('/auth/v1/phone/start', { phone: '+491701000001' })
  const code = String(world.inbox.received[0]?.body.code)
  const challengeId = start.body.result.challengeId
  const answers = []
  for (const guess of wrongCodes(code, OTP.MaxAttempts - 1)) {
    answers.push(await world.post('/auth/v1/phone/verify', { challengeId, code: guess }))
  }
  assert.deepEqual(
    answers.map((answer) => answer.body.error.code),
    Array(OTP.MaxAttempts - 1).fill(errorCodes.InvalidCredentials.code),
  )
  assert.match(answers.at(-1)!.body.error.message, /1 attempt left/)
  const right = await world.post('/auth/v1/phone/verify', { challengeId, code })
  assert.equal(right.status, 200, JSON.stringify(right.body))
})

forEachDialect('phone code attempt limit: after limit wrong codes even the right one fails', async (t, dialect) => {
  const world = await startPhoneWorld(t, dialect, { settings: { Otp: OTP } })
  const start = await world.post('/auth/v1/phone/start', { phone: '+491701000002' })
  const code = String(world.inbox.received[0]?.body.code)
  const challengeId = start.body.result.challengeId
  const answers = []
  for (const guess of wrongCodes(code, OTP.MaxAttempts)) {
    answers.push(await world.post('/auth/v1/phone/verify', { challengeId, code: guess }))
  }
  assert.deepEqual(
    answers.map((answer) => answer.body.error.code),
    [...Array(OTP.MaxAttempts - 1).fill(errorCodes.InvalidCredentials.code), errorCodes.ChallengeExpired.code],
    'the guess that reaches the limit ends the challenge',
  )
  // Each wrong code says how many tries are left; the last says why the code no longer works.
  assert.deepEqual(
    answers.map((answer) => answer.body.error.details),
    [
      ...Array.from({ length: OTP.MaxAttempts - 1 }, (_, index) => ({ attemptsLeft: OTP.MaxAttempts - 1 - index })),
      { reason: 'attempts_exhausted' },
    ],
  )
  const right = await world.post('/auth/v1/phone/verify', { challengeId, code })
  assert.equal(right.status, 401)
  assert.equal(right.body.error.code, errorCodes.ChallengeExpired.code)
  assert.equal(right.response.headers.getSetCookie().length, 0, 'no session was made')
})

forEachDialect('a flood of concurrent guesses gets no more than MaxAttempts evaluated', async (t, dialect) => {
  const world = await startPhoneWorld(t, dialect, { settings: { Otp: OTP } })
  const start = await world.post('/auth/v1/phone/start', { phone: '+491701000003' })
  const code = String(world.inbox.received[0]?.body.code)
  const challengeId = start.body.result.challengeId

  const flood = await Promise.all(
    wrongCodes(code, 4 * OTP.MaxAttempts).map((guess) =>
      world.post('/auth/v1/phone/verify', { challengeId, code: guess }),
    ),
  )

  const wrong = flood.filter((answer) => answer.body.error.code === errorCodes.InvalidCredentials.code)
  assert.equal(wrong.length, OTP.MaxAttempts - 1)
  assert.ok(flood.every((answer) => answer.status === 401))
  const row = await world.store.db
    .selectFrom('login_challenges')
    .select(['attempts', 'consumed'])
    .executeTakeFirstOrThrow()
  assert.deepEqual(row, { attempts: OTP.MaxAttempts, consumed: 1 })
  const right = await world.post('/auth/v1/phone/verify', { challengeId, code })
  assert.equal(right.body.error.code, errorCodes.ChallengeExpired.code)
})

forEachDialect('a phone code expires exactly at creation + CodeTtlSeconds', async (t, dialect) => {
  const clock = createClock()
  const world = await startPhoneWorld(t, dialect, { settings: { Otp: OTP }, now: clock.now })
  const early = await world.post('/auth/v1/phone/start', { phone: '+491701000004' })
  const late = await world.post('/auth/v1/phone/start', { phone: '+491701000005' })
  const [earlyCode, lateCode] = world.inbox.received.map((sms) => String(sms.body.code))

  clock.advance(OTP.CodeTtlSeconds * 1000 - 1)
  const inTime = await world.post('/auth/v1/phone/verify', {
    challengeId: early.body.result.challengeId,
    code: earlyCode,
  })
  assert.equal(inTime.status, 200, 'the last millisecond still counts')
  clock.advance(1)
  const expired = await world.post('/auth/v1/phone/verify', {
    challengeId: late.body.result.challengeId,
    code: lateCode,
  })
  assert.equal(expired.status, 401)
  assert.equal(expired.body.error.code, errorCodes.ChallengeExpired.code)
})

forEachDialect('magic-link tokens cannot be guessed from near misses or the code', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const { challengeId, code, token } = await world.startEmail('guess@example.com')
  const flip = (char: string) => (char === 'A' ? 'B' : 'A')
  const guesses = [
    `${token.slice(0, -1)}${flip(token.at(-1)!)}`,
    `${flip(token[0]!)}${token.slice(1)}`,
    token.slice(0, -1),
    `${token}A`,
    token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase(),
    code.padEnd(20, '0'),
    challengeId.padEnd(20, '0'),
    'A'.repeat(43),
  ]
  for (const guess of guesses) {
    const response = await world.post('/auth/v1/magic', { token: guess })
    assert.equal(response.status, 401, guess)
    assert.equal((await json(response)).error.code, errorCodes.ChallengeExpired.code, guess)
    assert.deepEqual(response.headers.getSetCookie(), [], guess)
  }
  const real = await world.post('/auth/v1/magic', { token })
  assert.equal(real.status, 200, 'failed guesses did not burn the real link')
})

forEachDialect('concurrent starts never send more codes than MaxChallengesPerTargetPerHour', async (t, dialect) => {
  const world = await startPhoneWorld(t, dialect, { settings: { Otp: { ...OTP, MaxChallengesPerTargetPerHour: 2 } } })
  const start = () => world.post('/auth/v1/phone/start', { phone: '+491701000006' })
  const answers = await Promise.all(Array.from({ length: 12 }, start))

  // Racing starts may all be refused together, but never pass the limit together.
  const passed = answers.filter((answer) => answer.status === 200).length
  assert.ok(passed <= 2, `${passed} of 12 concurrent starts passed`)
  assert.ok(answers.every((answer) => answer.status === 200 || answer.status === 429))
  assert.equal(world.inbox.received.length, passed, 'one text per passed start')
  const rows = await world.store.db.selectFrom('login_challenges').select('id').execute()
  assert.equal(rows.length, passed, 'refused starts left no challenge behind')
  for (let i = passed; i < 2; i++) assert.equal((await start()).status, 200, 'the slots left are usable')
  assert.equal((await start()).status, 429)
  assert.equal(world.inbox.received.length, 2)
})

forEachDialect(
  'the per-address code limit: limit−1 and limit pass, limit+1 gets 429 with Retry-After until the hour ends',
  async (t, dialect) => {
    const clock = createClock()
    const world = await startPhoneWorld(t, dialect, {
      settings: { Otp: { ...OTP, MaxChallengesPerTargetPerHour: 2 } },
      now: clock.now,
    })
    const start = () => world.post('/auth/v1/phone/start', { phone: '+491701000007' })
    assert.equal((await start()).status, 200, 'limit − 1')
    clock.advance(600_000)
    assert.equal((await start()).status, 200, 'limit')

    const refused = await start()
    assert.equal(refused.status, 429, 'limit + 1')
    assert.equal(refused.body.error.code, errorCodes.RateLimited.code)
    assert.equal(refused.response.headers.get('retry-after'), '3000', 'until the first code is an hour old')
    clock.advance(3_000_000 - 1)
    const lastMillisecond = await start()
    assert.equal(lastMillisecond.status, 429)
    assert.equal(lastMillisecond.response.headers.get('retry-after'), '1')
    clock.advance(1)
    assert.equal((await start()).status, 200, 'the first code left the hour')
    assert.equal(world.inbox.received.length, 3)
  },
)

forEachDialect('a challenge ended by wrong codes is dead, its magic link included', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { Otp: OTP } })
  const ended = await world.startEmail('guessed@example.com')
  for (const guess of wrongCodes(ended.code, OTP.MaxAttempts)) {
    await world.post('/auth/v1/email/verify', { challengeId: ended.challengeId, code: guess })
  }
  const link = await world.post('/auth/v1/magic', { token: ended.token })
  const body = await json(link)
  assert.equal(link.status, 401, JSON.stringify(body))
  assert.equal(body.error.code, errorCodes.ChallengeExpired.code)
  assert.deepEqual(link.headers.getSetCookie(), [])
  assert.deepEqual(await world.store.db.selectFrom('sessions').select('id').execute(), [], 'no session was made')

  // One wrong code fewer leaves the challenge alive, and its link signs in.
  const alive = await world.startEmail('guessed@example.com')
  for (const guess of wrongCodes(alive.code, OTP.MaxAttempts - 1)) {
    await world.post('/auth/v1/email/verify', { challengeId: alive.challengeId, code: guess })
  }
  const signedIn = await world.post('/auth/v1/magic', { token: alive.token })
  assert.equal(signedIn.status, 200, JSON.stringify(await json(signedIn)))
})
