import assert from 'node:assert/strict'
import test from 'node:test'
import { createService, errorCodes } from '@atrium/platform'
import { forEachDialect, json, listen } from '@atrium/platform/testing'
import { startSignInWorld } from '../../test/sign-in.ts'
import { ANONYMOUS } from './caller.ts'
import { installCsrf, leaveAppOriginsToCors } from './csrf.ts'

forEachDialect(
  'CSRF: a cookie-authenticated POST without the right token or from another site is refused',
  async (t, dialect) => {
    const world = await startSignInWorld(t, dialect)
    const { cookie, csrf } = await world.signIn('target@example.com')
    const attacks: [string, Record<string, string>][] = [
      ['no token (a form post from another site)', { cookie }],
      ['a wrong token', { cookie, 'x-csrf-token': `${csrf.slice(0, -1)}${csrf.endsWith('x') ? 'y' : 'x'}` }],
      ['a token of another length', { cookie, 'x-csrf-token': `${csrf}x` }],
      ['an empty token', { cookie, 'x-csrf-token': '' }],
      ['the right token from another origin', { cookie, 'x-csrf-token': csrf, origin: 'https://evil.example' }],
      ['the right token, cross-site fetch metadata', { cookie, 'x-csrf-token': csrf, 'sec-fetch-site': 'cross-site' }],
      ['the right token, origin "null"', { cookie, 'x-csrf-token': csrf, origin: 'null' }],
    ]
    for (const [name, headers] of attacks) {
      for (const path of ['/auth/v1/logout_all', '/auth/v1/keys', '/msg/v1/send_message']) {
        const response = await world.post(path, { name: 'k' }, headers)
        assert.equal(response.status, 403, `${name} on ${path}`)
        assert.equal((await json(response)).error.code, errorCodes.CsrfRejected.code, `${name} on ${path}`)
      }
    }
    const stillSignedIn = await fetch(`${world.url}/auth/v1/session`, { headers: { cookie } })
    assert.equal(stillSignedIn.status, 200, 'no attack signed the user out')

    const allowed = await world.post(
      '/auth/v1/logout',
      {},
      { cookie, 'x-csrf-token': csrf, origin: world.config.PublicOrigin },
    )
    assert.equal(allowed.status, 200, 'the right token from the own origin passes')
  },
)

forEachDialect(
  'CSRF: the token of another session, or sent anywhere but the header, is refused',
  async (t, dialect) => {
    const world = await startSignInWorld(t, dialect)
    const victim = await world.signIn('victim@example.com')
    const victimElsewhere = await world.signIn('victim@example.com')
    const attacker = await world.signIn('attacker@example.com')
    const origin = new URL(world.config.PublicOrigin)
    const attacks: [string, Record<string, string>, string][] = [
      ['the attacker’s own token', { cookie: victim.cookie, 'x-csrf-token': attacker.csrf }, ''],
      ['the token of the victim’s other session', { cookie: victim.cookie, 'x-csrf-token': victimElsewhere.csrf }, ''],
      ['the token in the query', { cookie: victim.cookie }, `?csrf=${victim.csrf}&x-csrf-token=${victim.csrf}`],
      ['the token in a cookie', { cookie: `${victim.cookie}; x-csrf-token=${victim.csrf}; csrf=${victim.csrf}` }, ''],
      [
        'the right token from a sibling subdomain',
        { cookie: victim.cookie, 'x-csrf-token': victim.csrf, origin: `${origin.protocol}//evil.${origin.host}` },
        '',
      ],
      [
        'the right token from another port',
        { cookie: victim.cookie, 'x-csrf-token': victim.csrf, origin: `${origin.protocol}//${origin.hostname}:1` },
        '',
      ],
    ]
    for (const [name, headers, query] of attacks) {
      for (const path of ['/auth/v1/logout_all', '/msg/v1/send_message']) {
        const response = await world.post(`${path}${query}`, { csrf: victim.csrf }, headers)
        assert.equal(response.status, 403, `${name} on ${path}`)
        assert.equal((await json(response)).error.code, errorCodes.CsrfRejected.code, `${name} on ${path}`)
      }
    }
    for (const { cookie } of [victim, victimElsewhere, attacker]) {
      assert.equal(
        (await fetch(`${world.url}/auth/v1/session`, { headers: { cookie } })).status,
        200,
        'no one was signed out',
      )
    }
  },
)

forEachDialect('CSRF: bearer and API-key callers are exempt, GETs are not checked', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const { cookie, csrf } = await world.signIn('keys@example.com')
  const created = await world.post('/auth/v1/keys', { name: 'ci' }, { cookie, 'x-csrf-token': csrf })
  const { key } = (await json(created)).result
  const { token } = await world.store.sessions.create({ crmId: 1, method: 'email_otp', ip: '', userAgent: '' })

  const withKey = await world.post('/auth/v1/logout', {}, { 'x-api-key': key, origin: 'https://elsewhere.example' })
  assert.equal((await json(withKey)).error.code, errorCodes.SessionRequired.code, 'judged by the route, not CSRF')
  const withBearer = await world.post('/auth/v1/logout', {}, { authorization: `Bearer ${token}` })
  assert.equal(withBearer.status, 200)
  assert.equal((await fetch(`${world.url}/auth/v1/session`, { headers: { cookie } })).status, 200)
})

forEachDialect('CSRF: a sign-in posted from another site is refused (login CSRF)', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const { challengeId, code } = await world.startEmail('login-csrf@example.com')
  const response = await world.post('/auth/v1/email/verify', { challengeId, code }, { origin: 'https://evil.example' })
  assert.equal(response.status, 403)
  assert.equal((await json(response)).error.code, errorCodes.CsrfRejected.code)
  const fromHome = await world.post(
    '/auth/v1/email/verify',
    { challengeId, code },
    { origin: world.config.PublicOrigin },
  )
  assert.equal(fromHome.status, 200, 'the refused attempt did not use up the code')
})

test('CSRF: the allowedOrigin hook lets the CORS layer judge an origin; the token is still required', async (t) => {
  const app = createService({
    name: 't',
    version: '1.2.3',
    healthPath: '/health',
    domainGuard: { domain: null, devHost: '' },
    logger: false,
  })
  app.decorateRequest('caller', null as unknown as typeof ANONYMOUS)
  app.addHook('onRequest', async (request) => {
    request.caller = request.headers.cookie
      ? { ...ANONYMOUS, keyType: 'session', crmId: 1, csrf: 'tok'.repeat(8), viaCookie: true }
      : ANONYMOUS
  })
  installCsrf(app, {
    publicOrigin: 'https://home.example',
    allowedOrigin: (origin) => origin === 'https://app.example',
  })
  app.post('/own', async () => ({ ok: true }))
  await app.register(async function judged(scope) {
    leaveAppOriginsToCors(scope)
    scope.post('/x', async () => ({ ok: true }))
  })
  const url = await listen(t, app)
  const post = (headers: Record<string, string>, path = '/x') =>
    fetch(`${url}${path}`, { method: 'POST', headers: { cookie: 'c=1', ...headers } })

  assert.equal((await post({ origin: 'https://app.example', 'x-csrf-token': 'tok'.repeat(8) })).status, 200)
  assert.equal((await post({ origin: 'https://app.example' })).status, 403)
  assert.equal((await post({ origin: 'https://other.example', 'x-csrf-token': 'tok'.repeat(8) })).status, 403)
  const own = await post({ origin: 'https://app.example', 'x-csrf-token': 'tok'.repeat(8) }, '/own')
  assert.equal(own.status, 403, 'a route without a CORS layer refuses the app origin')
})
