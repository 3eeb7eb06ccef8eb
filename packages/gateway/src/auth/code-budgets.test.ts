import assert from 'node:assert/strict'
import { request } from 'node:http'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, listen } from '@atrium/platform/testing'
import { startSignInWorld } from '../../test/sign-in.ts'
import { startPhoneWorld } from '../../test/sms-inbox.ts'
import { createClock, SERVICE_SECRET } from '../../test/support.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'

// Budgets on sign-in code sends across addresses (issue 14, item 8): per client address and overall.

interface Answer {
  status: number
  retryAfter: string | undefined
  body: { error?: { code: number; details?: { scope?: string; retryAfterSeconds?: number } } }
}

/** POSTs JSON over a new connection from `localAddress` (any 127.x.y.z reaches the loopback listener). */
function postFrom(
  base: string,
  localAddress: string,
  path: string,
  body: object,
  headers: Record<string, string> = {},
) {
  return new Promise<Answer>((resolve, reject) => {
    const payload = JSON.stringify(body)
    const outgoing = request(
      `${base}${path}`,
      {
        method: 'POST',
        agent: false,
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (incoming) => {
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('end', () => {
          const retry = incoming.headers['retry-after']
          resolve({
            status: incoming.statusCode ?? 0,
            retryAfter: typeof retry === 'string' ? retry : undefined,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
          })
        })
      },
    )
    outgoing.on('error', reject)
    outgoing.end(payload)
  })
}

function assertRefused(answer: Answer, scope: string, retryAfterSeconds: number, what: string) {
  assert.equal(answer.status, 429, `${what}: ${JSON.stringify(answer.body)}`)
  assert.equal(answer.body.error?.code, errorCodes.RateLimited.code, what)
  assert.deepEqual(answer.body.error?.details, { scope, retryAfterSeconds }, what)
  assert.equal(answer.retryAfter, String(retryAfterSeconds), what)
}

const HOUR_S = 3600

forEachDialect('one client gets MaxCodesPerClientPerHour codes for any addresses, then 429', async (t, dialect) => {
  const clock = createClock()
  const budget = 5
  const world = await startSignInWorld(t, dialect, {
    now: clock.now,
    settings: { Otp: { MaxCodesPerClientPerHour: budget, MaxCodesPerHour: 100 } },
  })
  const answers: Answer[] = []
  for (let n = 0; n < 15; n++) {
    answers.push(await postFrom(world.url, '127.0.0.1', '/auth/v1/email/start', { email: `bomb${n}@example.com` }))
    clock.advance(1000)
  }
  for (const [n, answer] of answers.entries()) {
    // Asked at second n. Refused starts leave no row, so the budget frees up when the first code
    // (second 0) is an hour old.
    if (n < budget) assert.equal(answer.status, 200, `address ${n}: ${JSON.stringify(answer.body)}`)
    else assertRefused(answer, 'client', HOUR_S - n, `address ${n}`)
  }
  const mailed = new Set(world.smtp.received.flatMap((mail) => mail.envelopeTo))
  assert.equal(mailed.size, budget, 'only the budget was mailed')

  const other = await postFrom(world.url, '127.0.0.2', '/auth/v1/email/start', { email: 'bomb0@example.com' })
  assert.equal(other.status, 200, `another client is not affected: ${JSON.stringify(other.body)}`)

  clock.advance(HOUR_S * 1000 - 15_000)
  const later = await postFrom(world.url, '127.0.0.1', '/auth/v1/email/start', { email: 'late@example.com' })
  assert.equal(later.status, 200, 'an hour after the first code the client has room again')
})

forEachDialect('the overall budget refuses every client once spent', async (t, dialect) => {
  const clock = createClock()
  const budget = 4
  const world = await startSignInWorld(t, dialect, {
    now: clock.now,
    settings: { Otp: { MaxCodesPerClientPerHour: 100, MaxCodesPerHour: budget } },
  })
  for (let n = 0; n < budget; n++) {
    const answer = await postFrom(world.url, `127.0.0.${n + 1}`, '/auth/v1/email/start', { email: `u${n}@example.com` })
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
  }
  for (const from of ['127.0.0.1', '127.0.0.9', '127.0.1.1']) {
    const answer = await postFrom(world.url, from, '/auth/v1/email/start', { email: `new-${from}@example.com` })
    assertRefused(answer, 'overall', HOUR_S, `from ${from}`)
  }
  assert.equal(world.smtp.received.length, budget)
  const rows = await world.store.db
    .selectFrom('login_challenges')
    .select('kind')
    .where('kind', '=', 'email_otp')
    .execute()
  assert.equal(rows.length, budget, 'refused starts leave no challenge')
})

forEachDialect('phone codes count toward the client budget too', async (t, dialect) => {
  const budget = 3
  const world = await startPhoneWorld(t, dialect, { settings: { Otp: { MaxCodesPerClientPerHour: budget } } })
  const statuses: number[] = []
  for (let n = 0; n < budget + 2; n++) {
    statuses.push(
      (await postFrom(world.url, '127.0.0.1', '/auth/v1/phone/start', { phone: `+49170100000${n}` })).status,
    )
  }
  assert.deepEqual(statuses, [...Array(budget).fill(200), 429, 429])
  assert.equal(world.inbox.received.length, budget)
})

forEachDialect('an IPv6 client is budgeted by its /64, behind a trusted proxy', async (t, dialect) => {
  const world = await startSignInWorld(t, dialect, {
    settings: { Otp: { MaxCodesPerClientPerHour: 2 }, Proxy: { TrustedProxies: ['127.0.0.1'] } },
  })
  const start = (client: string, email: string) =>
    postFrom(world.url, '127.0.0.1', '/auth/v1/email/start', { email }, { 'x-forwarded-for': client })
  assert.equal((await start('2001:db8:1:2::1', 'a@example.com')).status, 200)
  assert.equal((await start('2001:db8:1:2:ffff::9', 'b@example.com')).status, 200)
  assert.equal((await start('2001:db8:1:2::abcd', 'c@example.com')).status, 429, 'the same /64')
  assert.equal((await start('2001:db8:1:3::1', 'c@example.com')).status, 200, 'another /64')
  assert.equal((await start('198.51.100.7', 'd@example.com')).status, 200)
  assert.equal((await start('::ffff:198.51.100.7', 'e@example.com')).status, 200)
  assert.equal((await start('198.51.100.7', 'f@example.com')).status, 429, 'an IPv4-mapped address is its IPv4 address')
})

forEachDialect('gateways sharing one database share the budgets', async (t, dialect) => {
  const settings = { Otp: { MaxCodesPerClientPerHour: 2, MaxCodesPerHour: 100 } }
  const first = await startSignInWorld(t, dialect, { settings })
  const second = await buildGateway(
    loadGatewayConfig(
      { ...settings, GatewayDB: first.config.GatewayDB, ServiceSecret: SERVICE_SECRET, Modules: first.config.Modules },
      {},
    ),
  )
  const secondUrl = await listen(t, second)
  assert.equal((await postFrom(first.url, '127.0.0.1', '/auth/v1/email/start', { email: 'a@example.com' })).status, 200)
  assert.equal((await postFrom(secondUrl, '127.0.0.1', '/auth/v1/email/start', { email: 'b@example.com' })).status, 200)
  for (const url of [first.url, secondUrl]) {
    const answer = await postFrom(url, '127.0.0.1', '/auth/v1/email/start', { email: 'c@example.com' })
    assert.equal(answer.status, 429, JSON.stringify(answer.body))
    assert.equal(answer.body.error?.details?.scope, 'client')
  }
})

forEachDialect('parallel starts from one client never send more than its budget', async (t, dialect) => {
  const budget = 5
  const world = await startSignInWorld(t, dialect, { settings: { Otp: { MaxCodesPerClientPerHour: budget } } })
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, n) =>
      postFrom(world.url, '127.0.0.1', '/auth/v1/email/start', { email: `p${n}@example.com` }),
    ),
  )
  const sent = answers.filter((answer) => answer.status === 200).length
  assert.ok(sent <= budget, `${sent} codes were sent`)
  for (const answer of answers) assert.ok([200, 429].includes(answer.status), JSON.stringify(answer.body))
  const rows = await world.store.db
    .selectFrom('login_challenges')
    .select('id')
    .where('kind', '=', 'email_otp')
    .execute()
  assert.equal(rows.length, sent, 'every stored code was answered 200')
  assert.equal(world.smtp.received.length, sent)
})
