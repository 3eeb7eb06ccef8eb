import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { AppFlag, type DatabaseDialect, errorCodes } from '@atrium/platform'
import { forEachDialect, json, until } from '@atrium/platform/testing'
import { sessionCookieOf, startSignInWorld } from '../../test/sign-in.ts'

const PUBLIC_ORIGIN = 'https://atrium.example'
/** The origin of a registered app without AppAuthAndCORS. */
const PLAIN_APP = 'https://plain-app.example'
/** The origin of a registered app with AppAuthAndCORS. */
const CORS_APP = 'https://cors-app.example'

/** Site headers a browser may send; each case names what it stands for. */
const REFUSED: [string, Record<string, string>][] = [
  ['Origin of an app without AppAuthAndCORS', { origin: PLAIN_APP }],
  ['Origin of an app with AppAuthAndCORS', { origin: CORS_APP }],
  ['Origin of no app', { origin: 'https://evil.example' }],
  ['Origin "null" (a sandboxed frame or data: page)', { origin: 'null' }],
  ['no Origin, Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
  ['no Origin, Sec-Fetch-Site same-site (a sibling subdomain)', { 'sec-fetch-site': 'same-site' }],
  ['no Origin, Referer on an app origin', { referer: `${PLAIN_APP}/shop/page` }],
  ['no Origin, Referer on an app origin with AppAuthAndCORS', { referer: `${CORS_APP}/` }],
]
const ALLOWED: [string, Record<string, string>][] = [
  ['Origin PublicOrigin', { origin: PUBLIC_ORIGIN }],
  ['no Origin, Sec-Fetch-Site same-origin', { 'sec-fetch-site': 'same-origin' }],
  ['no Origin, Referer on PublicOrigin', { referer: `${PUBLIC_ORIGIN}/auth/v1/magic` }],
  ['no site header at all (a server, not a browser)', {}],
]

/** A sign-in world with two registered apps and a cross-origin route, once the CORS layer knows the apps. */
async function startWorld(t: TestContext, dialect: DatabaseDialect) {
  const world = await startSignInWorld(t, dialect, {
    settings: {
      PublicOrigin: PUBLIC_ORIGIN,
      Otp: { MaxChallengesPerTargetPerHour: 100 },
      Proxy: { RouteReloadMs: 100, Routes: [{ Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] }] },
    },
  })
  await world.store.apps.create({ name: 'plain', owner: 1, origins: [PLAIN_APP] })
  await world.store.apps.create({ name: 'cors', owner: 1, origins: [CORS_APP], flags: AppFlag.AppAuthAndCORS })
  // The CORS layer re-reads the apps every RouteReloadMs: wait until it grants the CORS app.
  await until(async () => {
    const preflight = await fetch(`${world.url}/msg/v1/get_chats`, {
      method: 'OPTIONS',
      headers: { origin: CORS_APP, 'access-control-request-method': 'POST' },
    })
    return preflight.status === 204
  }, 'the CORS layer to learn the app')
  return world
}

type World = Awaited<ReturnType<typeof startWorld>>

function postMagic(world: World, form: boolean, token: string, headers: Record<string, string>) {
  return fetch(`${world.url}/auth/v1/magic`, {
    method: 'POST',
    headers: {
      'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
      ...headers,
    },
    body: form ? `token=${token}` : JSON.stringify({ token }),
    redirect: 'manual',
  })
}

async function assertRefused(response: Response, what: string) {
  const text = await response.text()
  assert.equal(response.status, 403, `${what}: ${text}`)
  assert.equal(JSON.parse(text).error.code, errorCodes.CsrfRejected.code, what)
  assert.deepEqual(response.headers.getSetCookie(), [], `${what}: nobody is signed in`)
}

forEachDialect('login CSRF: a magic-link post from any foreign site is refused, form or JSON', async (t, dialect) => {
  const world = await startWorld(t, dialect)
  const { token } = await world.startEmail('attacker@example.com')
  for (const form of [true, false]) {
    for (const [what, headers] of REFUSED) {
      await assertRefused(await postMagic(world, form, token, headers), `${form ? 'form' : 'JSON'}, ${what}`)
    }
  }
  const sessions = await world.store.db.selectFrom('sessions').select('id').execute()
  assert.deepEqual(sessions, [], 'no session was made')
  const home = await postMagic(world, false, token, { origin: PUBLIC_ORIGIN })
  assert.equal(home.status, 200, 'the refused posts did not use the link up')
})

forEachDialect('login CSRF: the magic link signs in from the gateway’s own site, form or JSON', async (t, dialect) => {
  const world = await startWorld(t, dialect)
  for (const form of [true, false]) {
    for (const [what, headers] of ALLOWED) {
      const { token } = await world.startEmail('owner@example.com')
      const response = await postMagic(world, form, token, headers)
      assert.equal(response.status, form ? 303 : 200, `${form ? 'form' : 'JSON'}, ${what}`)
      assert.ok(sessionCookieOf(response, world.config.Sessions.CookieName), what)
    }
  }
  const sessions = await world.store.db.selectFrom('sessions').select('id').execute()
  assert.equal(sessions.length, 2 * ALLOWED.length)
})

forEachDialect('login CSRF: code sign-in and code start refuse every foreign site', async (t, dialect) => {
  const world = await startWorld(t, dialect)
  const { challengeId, code } = await world.startEmail('victim@example.com')
  for (const [what, headers] of REFUSED) {
    await assertRefused(await world.post('/auth/v1/email/verify', { challengeId, code }, headers), `verify, ${what}`)
    await assertRefused(await world.post('/auth/v1/email/start', { email: 'x@example.com' }, headers), `start, ${what}`)
  }
  assert.equal(world.smtp.received.filter((mail) => mail.envelopeTo.includes('x@example.com')).length, 0)
  for (const [what, headers] of ALLOWED) {
    const started = await world.post('/auth/v1/email/start', { email: 'x@example.com' }, headers)
    assert.equal(started.status, 200, `start, ${what}`)
  }
  const verified = await world.post('/auth/v1/email/verify', { challengeId, code }, { origin: PUBLIC_ORIGIN })
  assert.equal(verified.status, 200, 'the refused posts did not use the code up')
})

forEachDialect(
  'an app origin may not use a session on the gateway’s own routes, only on CORS routes',
  async (t, dialect) => {
    const world = await startWorld(t, dialect)
    const { cookie, csrf } = await world.signIn('user@example.com', { origin: PUBLIC_ORIGIN })
    for (const origin of [CORS_APP, PLAIN_APP]) {
      const created = await world.post('/auth/v1/keys', { name: 'k' }, { cookie, 'x-csrf-token': csrf, origin })
      await assertRefused(created, `POST /auth/v1/keys from ${origin}`)
    }
    assert.deepEqual(await world.store.db.selectFrom('api_keys').select('id').execute(), [], 'no key was made')

    const group = { type: 2, name: 'from the app' }
    const granted = await world.post('/msg/v1/create_chat', group, { cookie, 'x-csrf-token': csrf, origin: CORS_APP })
    assert.equal(granted.status, 200, JSON.stringify(await json(granted)))
    assert.equal(granted.headers.get('access-control-allow-origin'), CORS_APP)
    const refused = await world.post('/msg/v1/create_chat', group, { cookie, 'x-csrf-token': csrf, origin: PLAIN_APP })
    assert.equal(refused.status, 403)
    assert.equal((await json(refused)).error.code, errorCodes.CorsRejected.code, 'judged by the CORS layer')
  },
)
