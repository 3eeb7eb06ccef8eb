import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { ConfigError } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { sessionCookieOf, startSignInWorld } from '../../test/sign-in.ts'
import { SERVICE_SECRET, startGateway } from '../../test/support.ts'
import { loadGatewayConfig } from '../config.ts'
import { cookieScopes } from './session-cookie.ts'

const NAME = 'atrium_session'
const SHARED = { PublicOrigin: 'https://p1.example.com', Sessions: { CookieDomain: 'example.com' } }
const MAX_AGE = 2_592_000
/** Clears the cookie of one scope: host-only (''), or a Domain. */
const clearing = (domain: string) =>
  `${NAME}=; Path=/;${domain ? ` Domain=${domain};` : ''} HttpOnly; SameSite=Lax; Secure; Max-Age=0`
/** The cookies of the same name another setting would have left (host-only, or the host's own Domain), cleared beside the shared one. */
const LEFTOVERS_CLEARED = [clearing(''), clearing('p1.example.com')]
const CLEARED = [clearing('example.com'), ...LEFTOVERS_CLEARED]

forEachDialect(
  'with Sessions.CookieDomain the session cookie is set and cleared for the whole domain',
  async (t, dialect) => {
    const frontend = await mkdtemp(join(tmpdir(), 'atrium-cookie-domain-'))
    t.after(() => rm(frontend, { recursive: true, force: true }))
    await writeFile(join(frontend, 'index.html'), '<!doctype html><title>Chat</title>')
    const world = await startSignInWorld(t, dialect, {
      settings: { ...SHARED, Static: { Apps: { '/chat/': frontend } } },
    })

    const { cookie, csrf, response } = await world.signIn('shared@example.com')
    const token = cookie.slice(`${NAME}=`.length)
    assert.deepEqual(response.headers.getSetCookie(), [
      `${NAME}=${token}; Path=/; Domain=example.com; HttpOnly; SameSite=Lax; Secure; Max-Age=${MAX_AGE}`,
      ...LEFTOVERS_CLEARED,
    ])
    assert.equal((await fetch(`${world.url}/auth/v1/session`, { headers: { cookie } })).status, 200)

    // A cookie naming no live session is cleared for the domain, on the gateway's own routes and on
    // the front door's (a static frontend here).
    const stale = `${NAME}=${'x'.repeat(43)}`
    for (const [path, status] of [
      ['/auth/v1/session', 401],
      ['/chat/', 200],
    ] as const) {
      const answer = await fetch(`${world.url}${path}`, { headers: { cookie: stale } })
      assert.equal(answer.status, status, path)
      assert.deepEqual(answer.headers.getSetCookie(), CLEARED, path)
    }

    const signedOut = await world.post('/auth/v1/logout', {}, { cookie, 'x-csrf-token': csrf })
    assert.equal(signedOut.status, 200)
    assert.deepEqual(signedOut.headers.getSetCookie(), CLEARED)
    assert.equal((await fetch(`${world.url}/auth/v1/session`, { headers: { cookie } })).status, 401)
  },
)

forEachDialect(
  'without Sessions.CookieDomain the session cookie names no Domain, and a shared one left from the setting is cleared',
  async (t, dialect) => {
    const world = await startSignInWorld(t, dialect, { settings: { PublicOrigin: 'https://p1.example.com' } })
    // A Domain cookie left from when the setting was on: browsers send it first, being older. Not
    // cleared, its ended session made every request anonymous, and clearing it as stale cleared
    // the new host-only cookie instead: signed out again on every request.
    const shared = [clearing('p1.example.com'), clearing('example.com')]
    const { cookie, csrf, response } = await world.signIn('own@example.com')
    assert.deepEqual(response.headers.getSetCookie(), [
      `${cookie}; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=${MAX_AGE}`,
      ...shared,
    ])
    const stale = await fetch(`${world.url}/auth/v1/session`, {
      headers: { cookie: `${NAME}=${'x'.repeat(43)}; ${cookie}` },
    })
    assert.equal(stale.status, 401, 'the first cookie sent is the one read')
    assert.deepEqual(stale.headers.getSetCookie(), [clearing(''), ...shared], 'every scope is cleared')
    const signedOut = await world.post('/auth/v1/logout', {}, { cookie, 'x-csrf-token': csrf })
    assert.deepEqual(signedOut.headers.getSetCookie(), [clearing(''), ...shared])
  },
)

test('a cookie for a host may have these scopes: host-only, and the Domain of the host or of a parent', () => {
  assert.deepEqual(cookieScopes('p1.atrium.example.com'), [
    '',
    'p1.atrium.example.com',
    'atrium.example.com',
    'example.com',
  ])
  assert.deepEqual(cookieScopes('localhost'), [''])
  assert.deepEqual(cookieScopes('127.0.0.1'), [''])
  assert.deepEqual(cookieScopes('[::1]'), [''])
})

forEachDialect(
  'the OAuth state cookie stays with the gateway host when the session cookie is shared',
  async (t, dialect) => {
    const gateway = await startGateway(t, dialect, {
      settings: { ...SHARED, OAuth: { GitHub: { ClientId: 'github-client', ClientSecret: 'github-secret' } } },
    })
    const started = await fetch(`${gateway.url}/auth/v1/federated/start?provider=github`, { redirect: 'manual' })
    assert.equal(started.status, 302)
    const [state, ...others] = started.headers.getSetCookie()
    assert.deepEqual(others, [])
    assert.match(
      state ?? '',
      new RegExp(`^${NAME}_oauth=[^;]+; Path=/auth/v1/federated/; HttpOnly; SameSite=Lax; Secure; Max-Age=\\d+$`),
    )
    assert.equal(sessionCookieOf(started, NAME), undefined)
  },
)

test('Sessions.CookieDomain must be a domain name that holds the host of PublicOrigin', () => {
  function problems(domain: string, publicOrigin = 'https://p1.example.com', cookieName = NAME): string {
    try {
      loadGatewayConfig(
        {
          ServiceSecret: SERVICE_SECRET,
          PublicOrigin: publicOrigin,
          Sessions: { CookieDomain: domain, CookieName: cookieName },
        },
        {},
      )
      return ''
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error))
      return error.message
    }
  }
  for (const domain of ['example.com', 'EXAMPLE.com', 'p1.example.com', '']) assert.equal(problems(domain), '', domain)
  assert.equal(problems('localhost', 'http://localhost:8080'), '')
  for (const domain of [
    'https://example.com',
    '.example.com',
    'example.com:443',
    'example.com/',
    'exa mple.com',
    '-x.com',
  ]) {
    assert.match(problems(domain), /Sessions\.CookieDomain: .* is not a domain name like example\.com/, domain)
  }
  assert.match(problems('127.0.0.1', 'http://127.0.0.1:8080'), /is not a domain name/)
  assert.match(
    problems('other.org'),
    /Sessions\.CookieDomain: the host of PublicOrigin \(p1\.example\.com\) must be other\.org or end with \.other\.org/,
  )
  // A suffix that is not a whole label does not cover the host.
  assert.match(problems('ample.com'), /must be ample\.com or end with \.ample\.com/)
  assert.match(problems('p2.example.com'), /must be p2\.example\.com/)
  // A __Host- cookie takes no Domain; without one the prefix is fine.
  assert.match(
    problems('example.com', 'https://p1.example.com', '__Host-atrium_session'),
    /Sessions\.CookieDomain: browsers refuse a __Host- cookie with a Domain/,
  )
  assert.equal(problems('', 'https://p1.example.com', '__Host-atrium_session'), '')
  assert.equal(problems('example.com', 'https://p1.example.com', '__Secure-atrium_session'), '')
})
