import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { createTestDatabaseUrl, forEachDialect, until } from '@atrium/platform/testing'
import { webPushSettings } from '../../test/push-service.ts'
import { fromBothWorkers, nodeDirectory, SECRET, send } from '../../test/workers.ts'
import { loadGatewayConfig } from '../config.ts'
import { openGatewayStore } from '../store.ts'
import { workerCount } from './workers.ts'

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
