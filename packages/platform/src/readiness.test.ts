import assert from 'node:assert/strict'
import { createDatabase } from './database/database.ts'
import { databaseCheck, installReadiness } from './readiness.ts'
import { createService } from './service.ts'
import { createTestDatabaseUrl, forEachDialect } from './testing/databases.ts'
import { json, listen } from './testing/http.ts'

forEachDialect(
  'readiness is 200 while the database answers and 503 naming it once it is closed',
  async (t, dialect) => {
    const database = createDatabase(await createTestDatabaseUrl(t, dialect))
    let open = true
    t.after(() => (open ? database.destroy() : undefined))
    const app = createService({
      name: 'ready',
      version: '1.2.3',
      healthPath: '/private/v1/health',
      domainGuard: { domain: null, devHost: '' },
      logger: false,
    })
    let slowAnswers = false
    installReadiness(app, {
      path: '/private/v1/ready',
      timeoutMs: 200,
      checks: {
        database: databaseCheck(database),
        // A dependency that hangs is down once the timeout passes.
        cache: () => (slowAnswers ? new Promise(() => {}) : Promise.resolve()),
      },
    })
    const base = await listen(t, app)

    const ready = await fetch(`${base}/private/v1/ready`)
    assert.equal(ready.status, 200)
    assert.deepEqual((await json(ready)).result, { status: 'ready', checks: { database: 'up', cache: 'up' } })

    slowAnswers = true
    const started = Date.now()
    const hanging = await fetch(`${base}/private/v1/ready`)
    assert.ok(Date.now() - started < 2000, 'a hanging dependency costs the timeout, not more')
    assert.equal(hanging.status, 503)
    assert.deepEqual((await json(hanging)).error.details, { checks: { database: 'up', cache: 'down' } })
    slowAnswers = false

    open = false
    await database.destroy()
    const closed = await fetch(`${base}/private/v1/ready`)
    assert.equal(closed.status, 503)
    const body = await json(closed)
    assert.equal(body.error.code, 1013)
    assert.equal(body.error.message, 'not ready: database down')
    assert.deepEqual(body.error.details, { checks: { database: 'down', cache: 'up' } })
    // Liveness asks nothing: the process still lives.
    assert.equal((await fetch(`${base}/private/v1/health`)).status, 200)
  },
)
