import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startGateway } from '../../test/support.ts'

async function appLogin(url: string, body: object) {
  const response = await fetch(`${url}/auth/v1/app/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'shop-backend/1.0' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: await json(response) }
}

forEachDialect('AppLogin gives an app token that works as Bearer and acts as the app', async (t, dialect) => {
  const { url, store } = await startGateway(t, dialect)
  const { app, secret } = await store.apps.create({ name: 'shop', owner: 5 })

  const { status, body } = await appLogin(url, { appId: String(app.id), secret })

  assert.equal(status, 200, JSON.stringify(body))
  assert.ok(body.result.token.length >= 43)
  assert.equal(typeof body.result.expiresAt, 'number')
  const session = await fetch(`${url}/auth/v1/session`, { headers: { authorization: `Bearer ${body.result.token}` } })
  const info = (await json(session)).result
  assert.deepEqual(
    { crmId: info.crmId, appId: info.appId, keyType: info.keyType, csrf: info.csrf },
    {
      crmId: '0',
      appId: String(app.id),
      keyType: 'app',
      csrf: '',
    },
  )
  const [row] = await store.db.selectFrom('login_audit').selectAll().execute()
  assert.equal(row?.method, 'app_login')
  assert.equal(row?.success, 1)
  assert.equal(row?.app_id, app.id)
  assert.equal(row?.user_agent, 'shop-backend/1.0')
})

forEachDialect('AppLogin answers a wrong secret and an unknown app id the same way', async (t, dialect) => {
  const { url, store } = await startGateway(t, dialect)
  const { app, secret } = await store.apps.create({ name: 'shop', owner: 5 })
  const other = await store.apps.create({ name: 'other', owner: 6 })

  const attempts = [
    { appId: String(app.id), secret: `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}` },
    { appId: String(app.id), secret: other.secret },
    { appId: '999999999', secret },
  ]
  const answers = await Promise.all(attempts.map((body) => appLogin(url, body)))
  for (const { status, body } of answers) {
    assert.equal(status, 401)
    assert.deepEqual(
      { ...body.error },
      { code: errorCodes.InvalidCredentials.code, message: 'Unknown app id or wrong secret.' },
    )
  }
  const failures = await store.db.selectFrom('login_audit').selectAll().where('success', '=', 0).execute()
  assert.equal(failures.length, 3)
  assert.ok(failures.every((row) => row.reason === 'invalid_credentials'))
  assert.equal((await store.db.selectFrom('sessions').selectAll().execute()).length, 0)
})

forEachDialect('AppLogin validates its body', async (t, dialect) => {
  const { url } = await startGateway(t, dialect)
  for (const body of [
    {},
    { appId: 'abc', secret: 'x' },
    { appId: '1', secret: '' },
    { appId: '1', secret: 'x', extra: 1 },
  ]) {
    const answer = await appLogin(url, body)
    assert.equal(answer.status, 400, JSON.stringify(body))
    assert.equal(answer.body.error.code, errorCodes.InvalidRequest.code)
  }
})

forEachDialect('a revoked or unknown app token is refused as a bearer', async (t, dialect) => {
  const { url, store } = await startGateway(t, dialect)
  const { app, secret } = await store.apps.create({ name: 'shop', owner: 5 })
  const { body } = await appLogin(url, { appId: String(app.id), secret })
  const headers = { authorization: `Bearer ${body.result.token}`, 'content-type': 'application/json' }
  assert.equal((await fetch(`${url}/auth/v1/logout`, { method: 'POST', headers, body: '{}' })).status, 200)
  const after = await fetch(`${url}/auth/v1/session`, { headers })
  assert.equal(after.status, 401)
  assert.equal((await json(after)).error.code, errorCodes.InvalidCredentials.code)
})
