import assert from 'node:assert/strict'
import test from 'node:test'
import { ApiError, errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { ATTACKS, expectedLanding, LOOKALIKES } from '../../test/return-address-payloads.ts'
import { startSignInWorld } from '../../test/sign-in.ts'
import { startPhoneWorld } from '../../test/sms-inbox.ts'
import { MAX_RETURN_ADDRESS_LENGTH, returnUrl, validateReturnAddress } from './return-address.ts'

test('return addresses that could leave the site are refused', () => {
  for (const attack of ATTACKS) {
    assert.throws(
      () => validateReturnAddress(attack),
      (error: unknown) => error instanceof ApiError && error.name === 'InvalidReturnAddress',
      JSON.stringify(attack),
    )
  }
})

test('same-site paths are accepted and normalised', () => {
  const cases: [string, string][] = [
    ['', '/'],
    ['/', '/'],
    ['/chat/', '/chat/'],
    ['/chat/c/42?tab=files#last', '/chat/c/42?tab=files#last'],
    ['/chat?code=AbC-123', '/chat?code=AbC-123'],
    ['/a/./b/../c', '/a/c'],
    ['/search?q=caf%C3%A9', '/search?q=caf%C3%A9'],
    ['/chat/feedback/App/7', '/chat/feedback/App/7'],
    ['/docs/metadata:x', '/docs/metadata:x'],
    // A userinfo look-alike inside a path is just a path segment on this site.
    ['/@evil.example', '/@evil.example'],
    ['/atrium.example@evil.example/x', '/atrium.example@evil.example/x'],
    // One canonical form: the path decoded until stable, dot segments resolved, escaped again.
    ['/%2e%2e/chat', '/chat'],
    ['/chat/%2e%2e/%40me', '/@me'],
    ['/%2563hat/', '/chat/'],
    ['/caf%c3%a9', '/caf%C3%A9'],
    ['/a%3Fb?x=%3F', '/a%3Fb?x=%3F'],
    ['/a%23b#c', '/a%23b#c'],
    ['/x/..', '/'],
  ]
  for (const [input, expected] of cases) assert.equal(validateReturnAddress(input), expected, input)
})

test('the canonical form is a fixed point and names the path the test resolved itself', () => {
  for (const input of [...LOOKALIKES, '/chat/c/42?tab=files#last', '/caf%c3%a9', '/%2e%2e/%252e%252e/chat']) {
    const canonical = validateReturnAddress(input)
    assert.equal(validateReturnAddress(canonical), canonical, input)
    const expected = expectedLanding(input, 'https://atrium.example')
    const landed = new URL(canonical, 'https://atrium.example')
    assert.equal(decodeURIComponent(landed.pathname), expected.path, input)
    assert.equal(landed.search + landed.hash, expected.rest, input)
  }
})

test('redirects are built from the public origin, whatever the path tries', () => {
  assert.equal(returnUrl('https://atrium.example', '/chat/'), 'https://atrium.example/chat/')
  assert.equal(returnUrl('http://localhost:8080', '/'), 'http://localhost:8080/')
  assert.throws(() => returnUrl('https://atrium.example', '//evil.example'))
  assert.equal(returnUrl('https://atrium.example', '/@evil.example'), 'https://atrium.example/@evil.example')
})

forEachDialect(
  'every open-redirect attack is refused by both sign-in starts before any code is sent',
  async (t, dialect) => {
    const email = await startSignInWorld(t, dialect)
    const phone = await startPhoneWorld(t, dialect)
    const post = async (url: string, path: string, body: object) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: response.status, error: (await json(response)).error }
    }
    for (const returnTo of ATTACKS) {
      // Only the over-long one is refused by the schema's maxLength, before the check runs.
      const expected =
        returnTo.length > MAX_RETURN_ADDRESS_LENGTH ? errorCodes.InvalidRequest : errorCodes.InvalidReturnAddress
      for (const [url, path, body] of [
        [email.url, '/auth/v1/email/start', { email: 'redirect@example.com', returnTo }],
        [phone.url, '/auth/v1/phone/start', { phone: '+491701234567', returnTo }],
      ] as const) {
        const { status, error } = await post(url, path, body)
        assert.equal(status, 400, `${path} ${JSON.stringify(returnTo)}`)
        assert.equal(error.code, expected.code, `${path} ${JSON.stringify(returnTo)}`)
      }
    }
    assert.equal(email.smtp.received.length, 0, 'no mail went out')
    assert.equal(phone.inbox.received.length, 0, 'no text went out')
    for (const world of [email, phone]) {
      assert.deepEqual(await world.store.db.selectFrom('login_challenges').select('id').execute(), [])
    }
  },
)

forEachDialect('an email sign-in stores and answers only the canonical return address', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const { challengeId, code } = await world.startEmail('canonical@example.com', { returnTo: '/%2e%2e/chat/%2e/c' })
  const stored = await world.store.db
    .selectFrom('login_challenges')
    .select('return_to')
    .where('id', '=', Number(challengeId))
    .executeTakeFirstOrThrow()
  assert.equal(stored.return_to, '/chat/c')
  const response = await world.post('/auth/v1/email/verify', { challengeId, code })
  assert.equal(response.status, 200)
  assert.equal((await json(response)).result.returnTo, '/chat/c')
})

forEachDialect(
  'the magic link form redirects only to the public origin, whatever path was accepted',
  async (t, dialect) => {
    const world = await startSignInWorld(t, dialect, { settings: { PublicOrigin: 'https://atrium.example' } })
    const accepted: [string, string][] = [
      ['/@evil.example', 'https://atrium.example/@evil.example'],
      ['/a/./b/..//c', 'https://atrium.example/a//c'],
      ['/chat?next=https://evil.example', 'https://atrium.example/chat?next=https://evil.example'],
    ]
    for (const [index, [returnTo, location]] of accepted.entries()) {
      const { token } = await world.startEmail(`redirect-${index}@example.com`, { returnTo })
      const response = await fetch(`${world.url}/auth/v1/magic`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
        redirect: 'manual',
      })
      assert.equal(response.status, 303, returnTo)
      assert.equal(response.headers.get('location'), location, returnTo)
    }
  },
)
