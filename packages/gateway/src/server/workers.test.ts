import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { type TestContext, test } from 'node:test'
import { createTestDatabaseUrl, forEachDialect, until } from '@atrium/platform/testing'
import { webPushSettings } from '../../test/push-service.ts'
import { loadGatewayConfig } from '../config.ts'
import { openGatewayStore } from '../store.ts'
import { workerCount } from './workers.ts'

const ENTRY = new URL('../main.ts', import.meta.url).pathname
const SECRET = 'workers-test-secret-'.padEnd(40, 'x')

interface Answer {
  status: number
  worker: string
  body: string
}

/** One request on a connection of its own, so that the kernel may hand it to either worker. */
function send(port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method,
      path,
      agent: false,
      headers: { host: 'localhost', ...headers },
    })
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, worker: String(res.headers['x-atrium-worker']), body }),
      )
    })
    req.on('error', reject)
    req.end()
  })
}

/** Sends the same request until both workers have answered it; returns every answer. */
async function fromBothWorkers(port: number, method: string, path: string, headers: Record<string, string> = {}) {
  const answers: Answer[] = []
  await until(
    async () => {
      answers.push(await send(port, method, path, headers))
      return new Set(answers.map((answer) => answer.worker)).size === 2
      // Generous: on a loaded machine a worker may take a while to start or to get a connection.
    },
    `${method} ${path} answered by both workers`,
    30_000,
  )
  return answers
}

interface Primary {
  child: ChildProcess
  port: Promise<number>
  /** Pid of each worker as the primary last reported it listening. */
  pids: Map<number, number>
  exited: Promise<[number | null, NodeJS.Signals | null]>
}

/** Runs the gateway entry with Workers=2 and follows the primary's reports of its workers. */
function startPrimary(t: TestContext, env: Record<string, string>, cwd: string): Primary {
  const child = spawn(process.execPath, [ENTRY], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ServiceSecret: SECRET, Workers: '2', Port: '0', Host: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const pids = new Map<number, number>()
  const port = new Promise<number>((resolve, reject) => {
    exited.then(([code]) => reject(new Error(`the gateway exited with ${code} before listening\n${stderr}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.includes('"gateway worker listening"')) return
      const entry = JSON.parse(line) as { worker: number; workerPid: number; port: number }
      pids.set(entry.worker, entry.workerPid)
      if (pids.size === 2) resolve(entry.port)
    })
  })
  return { child, port, pids, exited }
}

/**
 * A directory for one node's files, removed after the test, and the start of its primary there,
 * stopped after the test (registered before the database's removal, so the processes stop first).
 */
async function nodeDirectory(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'atrium-workers-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  let primary: Primary | undefined
  t.after(async () => {
    if (!primary || primary.child.exitCode !== null || primary.child.signalCode !== null) return
    primary.child.kill('SIGTERM')
    await primary.exited
  })
  return {
    dir,
    start(env: Record<string, string>): Primary {
      primary = startPrimary(t, env, dir)
      return primary
    },
  }
}

test('Workers: one per core by default (0), or the number set; the workers need node numbers below the CLI', () => {
  const base = { GatewayDB: 'sqlite::memory:', ServiceSecret: SECRET }
  assert.equal(workerCount(loadGatewayConfig(base, {}), 8), 8)
  assert.equal(workerCount(loadGatewayConfig({ ...base, Workers: 1 }, {}), 8), 1)
  assert.equal(workerCount(loadGatewayConfig({ ...base, Workers: 0 }, {}), 8), 8)
  assert.equal(workerCount(loadGatewayConfig({ ...base, Workers: 0, NodeNumber: 27 }, {}), 8), 4)
  assert.equal(workerCount(loadGatewayConfig({ ...base, Workers: 3 }, {}), 8), 3)
  assert.ok(loadGatewayConfig({ ...base, NodeNumber: 28, Workers: 3 }, {}))
  assert.throws(
    () => loadGatewayConfig({ ...base, NodeNumber: 29, Workers: 3 }, {}),
    /Workers: 3 workers take node numbers 29 to 31; all must be below 31/,
  )
})

forEachDialect(
  'two workers share one port; sign-out and revocation hold in both at once; only worker 0 sends',
  async (t, dialect) => {
    const node = await nodeDirectory(t)
    const dir = node.dir
    const url = await createTestDatabaseUrl(t, dialect)
    const push = webPushSettings()
    const env = {
      GatewayDB: url,
      LocalFileStoragePath: join(dir, 'files'),
      LogLevel: 'info',
      WebPush__Enabled: 'true',
      WebPush__PublicKey: push.PublicKey,
      WebPush__PrivateKey: push.PrivateKey,
      WebPush__Subject: push.Subject,
    }
    // The test writes its user, session and key straight into the gateway's database.
    const config = loadGatewayConfig({}, { ...env, ServiceSecret: SECRET })
    const store = await openGatewayStore(config, { node: 30 })
    t.after(() => store.close())
    const user = await store.users.create({ name: 'Ops', scopes: ['admin'] })
    const { token } = await store.sessions.create({
      crmId: user.crm_id,
      method: 'test',
      ip: '127.0.0.1',
      userAgent: 'test',
    })
    const { key, row } = await store.apiKeys.create({
      keyType: 'user',
      crmId: user.crm_id,
      appId: 0,
      scopes: ['admin'],
      name: 'metrics',
    })

    const primary = node.start(env)
    const port = await primary.port
    const health = await fromBothWorkers(port, 'GET', '/auth/v1/health')
    assert.ok(health.every((answer) => answer.status === 200))
    assert.deepEqual(new Set(health.map((answer) => answer.worker)), new Set(['0', '1']))

    // Only worker 0 has the web push and webhook dispatchers (their metrics exist only there).
    const metrics = await fromBothWorkers(port, 'GET', '/auth/v1/metrics', { 'x-api-key': key })
    for (const answer of metrics) {
      assert.equal(answer.status, 200)
      const sends = answer.worker === '0'
      assert.equal(answer.body.includes('atrium_push_queue'), sends, `push dispatcher in worker ${answer.worker}`)
      assert.equal(answer.body.includes('atrium_webhook_queue'), sends, `webhook dispatcher in worker ${answer.worker}`)
    }

    // Both workers have the session in their cache; signing out through one ends it in both at once.
    const bearer = { authorization: `Bearer ${token}` }
    assert.ok((await fromBothWorkers(port, 'GET', '/auth/v1/sessions', bearer)).every((a) => a.status === 200))
    const signOut = await send(port, 'POST', '/auth/v1/logout', bearer)
    assert.equal(signOut.status, 200, signOut.body)
    const after = await fromBothWorkers(port, 'GET', '/auth/v1/sessions', bearer)
    assert.deepEqual(
      after.map((answer) => answer.status),
      after.map(() => 401),
      'the signed-out session is refused by both workers',
    )

    // Likewise a revoked API key, revoked through a session on one worker.
    const second = await store.sessions.create({
      crmId: user.crm_id,
      method: 'test',
      ip: '127.0.0.1',
      userAgent: 'test',
    })
    assert.ok(
      (await fromBothWorkers(port, 'GET', '/auth/v1/session', { 'x-api-key': key })).every((a) => a.status === 200),
    )
    const revoke = await send(port, 'DELETE', `/auth/v1/keys/${row.id}`, { authorization: `Bearer ${second.token}` })
    assert.equal(revoke.status, 200, revoke.body)
    const refused = await fromBothWorkers(port, 'GET', '/auth/v1/session', { 'x-api-key': key })
    assert.deepEqual(
      refused.map((answer) => answer.status),
      refused.map(() => 401),
      'the revoked key is refused by both workers',
    )

    // A worker that dies is replaced, on the same port.
    const killed = primary.pids.get(1)!
    process.kill(killed, 'SIGKILL')
    await until(() => primary.pids.get(1) !== killed, 'worker 1 restarted', 30_000)
    await fromBothWorkers(port, 'GET', '/auth/v1/health')

    // SIGTERM to the primary stops every worker and the primary with 0.
    const workerPids = [...primary.pids.values()]
    primary.child.kill('SIGTERM')
    assert.deepEqual(await primary.exited, [0, null])
    for (const pid of workerPids) assert.throws(() => process.kill(pid, 0), /ESRCH/, `worker ${pid} is gone`)
  },
)

forEachDialect(
  'two workers share a session’s rate limit: the node admits about the limit, not twice it',
  async (t, dialect) => {
    const node = await nodeDirectory(t)
    const dir = node.dir
    const limit = 30
    const env = {
      GatewayDB: await createTestDatabaseUrl(t, dialect),
      LocalFileStoragePath: join(dir, 'files'),
      LogLevel: 'info',
      RateLimits__Session__Requests: String(limit),
      RateLimits__Session__WindowSeconds: '3600',
    }
    const config = loadGatewayConfig({}, { ...env, ServiceSecret: SECRET })
    const store = await openGatewayStore(config, { node: 30 })
    t.after(() => store.close())
    const user = await store.users.create({ name: 'Busy' })
    const { token } = await store.sessions.create({
      crmId: user.crm_id,
      method: 'test',
      ip: '127.0.0.1',
      userAgent: 't',
    })
    const primary = node.start(env)
    const port = await primary.port

    // One request per poll (every 20 ms), each on a new connection, until both workers refuse.
    const admitted = new Map<string, number>()
    const refusedBy = new Set<string>()
    await until(
      async () => {
        const answer = await send(port, 'GET', '/auth/v1/session', { authorization: `Bearer ${token}` })
        if (answer.status === 200) admitted.set(answer.worker, (admitted.get(answer.worker) ?? 0) + 1)
        else {
          assert.equal(answer.status, 429, answer.body)
          refusedBy.add(answer.worker)
        }
        return refusedBy.size === 2
      },
      'both workers refusing the session',
      60_000,
    )
    const total = [...admitted.values()].reduce((sum, count) => sum + count, 0)
    // Each worker counts its own at once and the other's every 100 ms: a few requests of slack, not
    // the limit again (per-worker windows would admit up to twice the limit).
    assert.ok(total >= limit, `admitted ${total}, at least the limit ${limit}`)
    assert.ok(total <= limit + 10, `admitted ${total} for a limit of ${limit} across ${admitted.size} workers`)
    assert.equal(admitted.size, 2, 'both workers admitted some of them')
  },
)
