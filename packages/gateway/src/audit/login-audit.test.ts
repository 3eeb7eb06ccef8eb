import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import type { FastifyRequest } from 'fastify'
import { startSignInWorld } from '../../test/sign-in.ts'
import { createClock } from '../../test/support.ts'
import { createSignIn } from '../auth/sign-in.ts'
import { createSessionCookie } from '../sessions/session-cookie.ts'
import { loadCountryLookup } from './country.ts'
import { createLoginAudit } from './login-audit.repository.ts'

const CLIENT = { screen: '1920x1080', deviceGuid: 'dev-1234-abcd', timezone: 'Europe/Berlin', language: 'de-DE' }

forEachDialect('every attempt is audited with the client fields, IP, user agent and outcome', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const headers = { 'user-agent': 'Mozilla/5.0 (Test)' }
  const start = await world.post('/auth/v1/email/start', { email: 'audit@example.com', client: CLIENT }, headers)
  const { challengeId } = (await json(start)).result
  const { code } = world.mailTo('audit@example.com')
  await world.post(
    '/auth/v1/email/verify',
    { challengeId, code: code === '000000' ? '000001' : '000000', client: CLIENT },
    headers,
  )
  const ok = await world.post('/auth/v1/email/verify', { challengeId, code, client: CLIENT }, headers)
  const { user } = (await json(ok)).result

  const rows = await world.store.db.selectFrom('login_audit').selectAll().orderBy('id').execute()
  assert.deepEqual(
    rows.map((row) => [row.method, row.success, row.reason, row.crm_id]),
    [
      ['email_otp_start', 1, '', 0],
      ['email_otp', 0, 'wrong_code', 0],
      ['email_otp', 1, '', Number(user.crmId)],
    ],
  )
  for (const row of rows) {
    assert.deepEqual(
      [row.ip, row.user_agent, row.screen, row.device_guid, row.timezone, row.language],
      ['127.0.0.1', 'Mozilla/5.0 (Test)', ...Object.values(CLIENT)],
    )
    assert.equal(row.country, '', 'loopback has no country')
  }
})

forEachDialect(
  'the audit query filters by user, IP and time, pages with before, and needs the admin scope',
  async (t, dialect) => {
    const clock = createClock()
    const world = await startSignInWorld(t, dialect, { now: clock.now })
    const audit = createLoginAudit(world.store.db, world.store.nextTick, clock.now)
    const base = { method: 'email_otp', success: true, userAgent: 'ua', country: '' }
    for (let i = 0; i < 6; i++) {
      await audit.record({ ...base, crmId: i % 2 === 0 ? 7 : 8, ip: i < 3 ? '192.0.2.1' : '198.51.100.9' })
      clock.advance(1000)
    }
    const start = clock.now() - 6000
    const admin = await world.store.users.create({ scopes: ['admin'] })
    const { token } = await world.store.sessions.create({ crmId: admin.crm_id, method: 't', ip: '', userAgent: '' })
    const query = async (params: string, cookie = `atrium_session=${token}`) =>
      json(await fetch(`${world.url}/auth/v1/audit?${params}`, { headers: { cookie } }))

    assert.equal((await query('')).result.entries.length, 6)
    assert.deepEqual(
      (await query('crmId=7')).result.entries.map((e: { crmId: string }) => e.crmId),
      ['7', '7', '7'],
    )
    assert.equal((await query('ip=198.51.100.9')).result.entries.length, 3)
    assert.equal(
      (await query(`from=${start + 1000}&to=${start + 3000}`)).result.entries.length,
      2,
      'from inclusive, to exclusive',
    )

    const first = (await query('limit=4')).result
    assert.equal(first.entries.length, 4)
    const second = (await query(`limit=4&before=${first.next}`)).result
    assert.equal(second.entries.length, 2)
    assert.equal(second.next, '')
    const ids = [...first.entries, ...second.entries].map((e: { id: string }) => Number(e.id))
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
      'newest first, no overlap',
    )
    assert.equal(new Set(ids).size, 6)

    assert.equal((await query('limit=0')).error.code, errorCodes.InvalidRequest.code)
    assert.equal((await query('crmId=abc')).error.code, errorCodes.InvalidRequest.code)
    const plain = await world.store.users.create()
    const plainSession = await world.store.sessions.create({ crmId: plain.crm_id, method: 't', ip: '', userAgent: '' })
    assert.equal((await query('', `atrium_session=${plainSession.token}`)).error.code, errorCodes.Forbidden.code)
    assert.equal((await query('', '')).error.code, errorCodes.SessionRequired.code)
  },
)

forEachDialect('audit rows take the country of the IP and bound every client field', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect)
  const loginAudit = createLoginAudit(world.store.db, world.store.nextTick)
  const cookie = createSessionCookie({ name: 's', domain: '', publicOrigin: 'http://localhost', maxAgeSeconds: 60 })
  const signIn = createSignIn({ ...world.store, cookie, loginAudit, lookupCountry: await loadCountryLookup() })
  const request = { ip: '8.8.8.8', headers: { 'user-agent': 'u'.repeat(2000), 'accept-language': 'fr-CH, fr;q=0.9' } }

  await signIn.record(request as unknown as FastifyRequest, { method: 'magic_link', success: false, reason: 'expired' })

  const [row] = await world.store.db.selectFrom('login_audit').selectAll().execute()
  assert.equal(row?.country, 'US')
  assert.equal(row?.user_agent.length, 512)
  assert.equal(row?.language, 'fr-CH', 'the language falls back to Accept-Language')
})

forEachDialect(
  'the audited IP comes from X-Forwarded-For only when the peer is a trusted proxy',
  async (t, dialect) => {
    const trusting = await startSignInWorld(t, dialect, { settings: { Proxy: { TrustedProxies: ['127.0.0.0/8'] } } })
    const plain = await startSignInWorld(t, dialect)
    // The client claims 192.0.2.7 to the proxy; the proxy (loopback here) appends the address it saw.
    const headers = { 'x-forwarded-for': '192.0.2.7, 8.8.8.8' }
    for (const world of [trusting, plain]) {
      await world.post('/auth/v1/email/start', { email: 'proxied@example.com' }, headers)
    }
    const ipOf = async (world: typeof plain) =>
      await world.store.db.selectFrom('login_audit').select(['ip', 'country']).executeTakeFirstOrThrow()
    assert.deepEqual(await ipOf(trusting), { ip: '8.8.8.8', country: 'US' }, 'the rightmost untrusted address')
    assert.deepEqual(await ipOf(plain), { ip: '127.0.0.1', country: '' }, 'an untrusted peer cannot claim an address')
  },
)
