import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { sessionCookieOf, startSignInWorld } from '../../test/sign-in.ts'

const PUBLIC_ORIGIN = 'https://atrium.example'
const CLIENT = {
  screen: '2560x1440',
  deviceGuid: '7f3c9a2e-1b4d-4e8f-9a6b-2c5d8e1f0a3b',
  timezone: 'America/New_York',
  language: 'en-US',
}

type World = Awaited<ReturnType<typeof startSignInWorld>>

/** What a browser sends when the person presses the page's button (no JavaScript). */
function postForm(world: World, body: string, headers: Record<string, string> = {}) {
  return fetch(`${world.url}/auth/v1/magic`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: PUBLIC_ORIGIN, ...headers },
    body,
    redirect: 'manual',
  })
}

function openLink(world: World, token: string, method = 'GET') {
  return fetch(`${world.url}/auth/v1/magic?token=${encodeURIComponent(token)}`, { method })
}

async function magicAudit(world: World) {
  return world.store.db.selectFrom('login_audit').selectAll().where('method', '=', 'magic_link').orderBy('id').execute()
}

forEachDialect('opening the link consumes nothing: opened twice, the token then signs in once', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { PublicOrigin: PUBLIC_ORIGIN } })
  const { token } = await world.startEmail('scanned@example.com', { returnTo: '/chat/' })

  for (const method of ['GET', 'HEAD', 'GET']) {
    const opened = await openLink(world, token, method)
    assert.equal(opened.status, 200, method)
    assert.match(opened.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/)
    assert.equal(opened.headers.get('cache-control'), 'no-store')
    assert.deepEqual(opened.headers.getSetCookie(), [], `${method} signs nobody in`)
  }
  assert.deepEqual(await magicAudit(world), [], 'opening is no sign-in attempt')

  const signedIn = await world.post('/auth/v1/magic', { token }, { origin: PUBLIC_ORIGIN })
  assert.equal(signedIn.status, 200)
  assert.equal((await json(signedIn)).result.returnTo, '/chat/')
  assert.ok(sessionCookieOf(signedIn, 'atrium_session'))

  const replay = await world.post('/auth/v1/magic', { token }, { origin: PUBLIC_ORIGIN })
  assert.equal(replay.status, 401)
  assert.equal((await json(replay)).error.code, errorCodes.ChallengeExpired.code)
  assert.equal((await postForm(world, `token=${token}`)).status, 401, 'the form post is refused too')
})

forEachDialect('the JSON post records the client fields in the login audit', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const { token } = await world.startEmail('audited@example.com')
  const headers = { 'user-agent': 'Mozilla/5.0 (Magic)' }

  const response = await world.post('/auth/v1/magic', { token, client: CLIENT }, headers)
  const { user } = (await json(response)).result
  await world.post('/auth/v1/magic', { token, client: CLIENT }, headers)

  const rows = await magicAudit(world)
  assert.deepEqual(
    rows.map((row) => [row.success, row.reason, row.crm_id]),
    [
      [1, '', Number(user.crmId)],
      [0, 'expired', 0],
    ],
  )
  for (const row of rows) {
    assert.deepEqual(
      [row.user_agent, row.screen, row.device_guid, row.timezone, row.language],
      ['Mozilla/5.0 (Magic)', CLIENT.screen, CLIENT.deviceGuid, CLIENT.timezone, CLIENT.language],
    )
  }
})

forEachDialect('the form post answers 303 to the return address on PublicOrigin', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { PublicOrigin: PUBLIC_ORIGIN } })
  const { token } = await world.startEmail('form@example.com', { returnTo: '/chat/c/42?tab=files' })

  const response = await postForm(world, `token=${token}`, { host: 'evil.example' })

  assert.equal(response.status, 303)
  assert.equal(response.headers.get('location'), `${PUBLIC_ORIGIN}/chat/c/42?tab=files`)
  assert.match(response.headers.getSetCookie()[0]!, /^atrium_session=.+; HttpOnly; SameSite=Lax; Secure; Max-Age=/)
  const [row] = await magicAudit(world)
  assert.equal(row?.success, 1)

  const replay = await postForm(world, `token=${token}`)
  assert.equal(replay.status, 401)
  assert.match(replay.headers.get('content-type') ?? '', /^text\/html/)
  assert.equal(replay.headers.get('cache-control'), 'no-store')
  const expiredPage = await replay.text()
  assert.match(expiredPage, /expired or was already used/)
  assert.match(expiredPage, /<a href="\/">Back to sign-in<\/a>/, 'the page leads back to sign-in')
  assert.deepEqual(replay.headers.getSetCookie(), [])
})

forEachDialect('a form post from another site is refused and leaves the token usable', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { PublicOrigin: PUBLIC_ORIGIN } })
  const { token } = await world.startEmail('csrf@example.com')

  // `Origin: null` is what a browser sends under `Referrer-Policy: no-referrer`; the page avoids it.
  for (const origin of ['https://evil.example', 'null']) {
    const refused = await postForm(world, `token=${token}`, { origin })
    assert.equal(refused.status, 403, origin)
    assert.equal((await json(refused)).error.code, errorCodes.CsrfRejected.code)
  }
  const crossSite = await fetch(`${world.url}/auth/v1/magic`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
    body: `token=${token}`,
  })
  assert.equal(crossSite.status, 403, 'no Origin, but Sec-Fetch-Site says cross-site')

  assert.equal((await postForm(world, `token=${token}`)).status, 303, 'the token was not consumed')
})

forEachDialect('the page allows only its own inline script and style, by hash', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { PublicOrigin: PUBLIC_ORIGIN } })
  const { token } = await world.startEmail('csp@example.com')

  const page = await openLink(world, token)
  const html = await page.text()

  const csp = new Map(
    (page.headers.get('content-security-policy') ?? '').split(';').map((directive) => {
      const [name, ...values] = directive.trim().split(/\s+/)
      return [name!, values]
    }),
  )
  const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]!)
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1]!)
  assert.equal(scripts.length, 1)
  assert.deepEqual(csp.get('script-src'), scripts.map(hash))
  assert.deepEqual(csp.get('style-src'), styles.map(hash))
  assert.deepEqual(csp.get('default-src'), ["'none'"])
  assert.deepEqual(csp.get('frame-ancestors'), ["'none'"])
  assert.deepEqual(csp.get('form-action'), ["'self'"])
  assert.equal(page.headers.get('x-frame-options'), 'DENY')
  assert.equal(page.headers.get('referrer-policy'), 'strict-origin', 'the token never travels in a Referer')
  assert.ok(!scripts[0]!.includes(token), 'the script reads the token from the page, it does not hold it')
  assert.ok(html.includes(`<input type="hidden" name="token" value="${token}">`))
  assert.match(html, /<form id="magic" method="post" action="\/auth\/v1\/magic">/)
})

forEachDialect('a token with quotes or angle brackets is refused, never reflected', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { PublicOrigin: PUBLIC_ORIGIN } })
  const hostile = ['"><script>alert(1)</script>', "x' autofocus onfocus='alert(1)", 'a&b', 'a b', '']
  for (const token of hostile) {
    const page = await openLink(world, token)
    assert.equal(page.status, 400, token)
    assert.match(page.headers.get('content-type') ?? '', /^application\/json/)
    const text = await page.text()
    assert.equal(JSON.parse(text).error.code, errorCodes.InvalidRequest.code)
    if (token) assert.ok(!text.includes(token), `${token} is not in the answer`)
    assert.ok(!/[<>]/.test(text), token)

    const posted = await world.post('/auth/v1/magic', { token })
    assert.equal((await json(posted)).error.code, errorCodes.InvalidRequest.code, token)
    const form = await postForm(world, new URLSearchParams({ token }).toString())
    assert.equal((await json(form)).error.code, errorCodes.InvalidRequest.code, token)
  }
  assert.equal((await json(await openLink(world, 'A'.repeat(129)))).error.code, errorCodes.InvalidRequest.code)
})

forEachDialect('the form body takes the token only, within a small size, on this route only', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, { settings: { PublicOrigin: PUBLIC_ORIGIN } })
  const { token } = await world.startEmail('form-limits@example.com')

  const extra = await postForm(world, `token=${token}&client=x`)
  assert.equal((await json(extra)).error.code, errorCodes.InvalidRequest.code)
  const large = await postForm(world, `token=${token}&pad=${'x'.repeat(2000)}`)
  assert.equal(large.status, 413)
  assert.equal((await json(large)).error.code, errorCodes.PayloadTooLarge.code)
  const elsewhere = await postForm(world, 'email=someone%40example.com')
  assert.equal(elsewhere.status, 400)
  const otherRoute = await fetch(`${world.url}/auth/v1/email/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'email=someone%40example.com',
  })
  assert.equal(otherRoute.status, 415, 'other sign-in routes take JSON only')

  assert.equal((await postForm(world, `token=${token}`)).status, 303, 'refused posts did not use the token')
})
