/**
 * Operator panel pages on large tables (issue 21): `npm exec -- node bench/proxy-admin.ts
 * [--rows 1000000] [--requests 100] [--warmup 5] [--database <url>]`. Fills the login audit with `rows`
 * attempts (users, addresses, countries and results spread over them) and as many operator
 * actions and users, then asks each list page, filtered and unfiltered, first page and a page deep
 * in the list, `requests` times in a row as a signed-in operator, and prints the p50 and p99 time
 * to the whole answer, after `warmup` requests to each page that are not counted. Target: p99 under 50 ms per page. The database is a fresh SQLite file unless
 * `--database` names another (an empty PostgreSQL database, for the other dialect); the query plans
 * of the audit's filters are printed too (EXPLAIN).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import type { AdminActionsTable, LoginAuditTable } from '../packages/gateway/src/db/schema.ts'
import { benchSessionToken, buildBenchGateway, listenOnLoopback } from './bench-gateway.ts'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '5' },
    database: { type: 'string' },
  },
})
const ROWS = Number(values.rows)
const REQUESTS = Number(values.requests)
const WARMUP = Number(values.warmup)
const BATCH = 500
const USERS = 1000

const dir = mkdtempSync(join(tmpdir(), 'atrium-bench-admin-'))
const database = values.database ?? `sqlite:${join(dir, 'gateway.db')}`
const { app, config } = await buildBenchGateway({
  GatewayDB: database,
  ServiceSecret: 'bench-service-secret'.padEnd(40, '-'),
})
const { db, nextTick } = app.store
try {
  const operatorToken = await benchSessionToken(app, 'Olive Operator', 'bench')
  const operator = (await db.selectFrom('sessions').select('crm_id').executeTakeFirstOrThrow()).crm_id
  await app.store.users.setScopes(operator, ['admin'])
  const userIds: number[] = []
  for (let index = 0; index < USERS; index++)
    userIds.push((await app.store.users.create({ name: `User ${index}` })).crm_id)

  const filled = Date.now()
  const start = Date.now() - ROWS * 1000
  for (let done = 0; done < ROWS; done += BATCH) {
    const audit: LoginAuditTable[] = []
    const actions: AdminActionsTable[] = []
    for (let index = done; index < Math.min(ROWS, done + BATCH); index++) {
      audit.push({
        id: nextTick(),
        crm_id: userIds[index % USERS]!,
        app_id: 0,
        method: 'email_otp',
        success: index % 7 === 0 ? 0 : 1,
        reason: index % 7 === 0 ? 'wrong_code' : '',
        ip: `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`,
        country: ['DE', 'FR', 'US', 'JP', 'BR'][index % 5]!,
        user_agent: 'Mozilla/5.0 (bench)',
        screen: '1920x1080',
        device_guid: '',
        timezone: 'Europe/Berlin',
        language: 'de-DE',
        created: start + index * 1000,
      })
      actions.push({
        id: nextTick(),
        crm_id: operator,
        action: 'route.save',
        target: `/r${index}/`,
        detail: 'chat, no flags',
        outcome: 'ok',
        at: start + index * 1000,
      })
    }
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('login_audit').values(audit).execute()
      await trx.insertInto('admin_actions').values(actions).execute()
    })
  }
  console.log(`filled ${ROWS} login audit rows and ${ROWS} operator actions in ${Date.now() - filled} ms`)
  // PostgreSQL: the statistics autovacuum gathers shortly after a bulk load; without them the planner
  // guesses a combined filter matches a few rows and reads every match of both indexes.
  if (app.store.dialect === 'postgres') await sql`analyze login_audit, admin_actions, users`.execute(db)

  const plans = [
    ['user', sql`select * from login_audit where crm_id = ${userIds[3]} order by id desc limit 100`],
    ['country', sql`select * from login_audit where country = ${'JP'} order by id desc limit 100`],
    ['result', sql`select * from login_audit where success = ${0} order by id desc limit 100`],
  ] as const
  for (const [name, query] of plans) {
    const explain = app.store.dialect === 'sqlite' ? sql`explain query plan ${query}` : sql`explain ${query}`
    const rows = (await explain.execute(db)).rows as Record<string, unknown>[]
    console.log(`plan (${name}): ${rows.map((row) => row.detail ?? row['QUERY PLAN']).join(' | ')}`)
  }

  const port = await listenOnLoopback(app)
  const cookie = `${config.Sessions.CookieName}=${operatorToken}`
  const deep = (await db
    .selectFrom('login_audit')
    .select('id')
    .orderBy('id', 'desc')
    .offset(Math.floor(ROWS / 2))
    .limit(1)
    .executeTakeFirst())!.id
  const pages = [
    '/ProxyAdmin/LoginAudit',
    `/ProxyAdmin/LoginAudit?FromTick=${deep}`,
    `/ProxyAdmin/LoginAudit?User=${userIds[3]}`,
    '/ProxyAdmin/LoginAudit?Country=JP&Result=failure',
    `/ProxyAdmin/LoginAudit?Ip=10.1.2.3`,
    `/ProxyAdmin/LoginAudit?From=${new Date(start + (ROWS / 2) * 1000).toISOString().slice(0, 16)}`,
    '/ProxyAdmin/Actions',
    `/ProxyAdmin/Actions?Operator=${operator}&FromTick=${deep}`,
    '/ProxyAdmin/Users',
    '/ProxyAdmin/Users?Search=User%2099',
  ]
  for (const path of pages) {
    const times: number[] = []
    for (let index = 0; index < WARMUP + REQUESTS; index++) {
      const began = performance.now()
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { cookie } })
      await response.text()
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`)
      if (index >= WARMUP) times.push(performance.now() - began)
    }
    times.sort((a, b) => a - b)
    const at = (share: number) => times[Math.min(times.length - 1, Math.floor(share * times.length))]!.toFixed(1)
    console.log(`${path.padEnd(60)} p50 ${at(0.5).padStart(7)} ms   p99 ${at(0.99).padStart(7)} ms`)
  }
} finally {
  await app.close()
  rmSync(dir, { recursive: true, force: true })
}
