import assert from 'node:assert/strict'
import { signedHeaders } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { type CrmClient, startCrm } from '../../../test/crm.ts'
import { SERVICE_SECRET } from '../../../test/support.ts'

const CREATED = '2026-03-04T05:06:07.089Z'
const ALICE_CONTACTS = [
  { kind: 'email', value: 'alice@example.com', verified: true },
  { kind: 'phone', value: '+4915112345678', verified: false },
]

async function withAliceAndBob(crm: CrmClient) {
  await crm.register([
    { member: '1001', name: 'Alice', created: CREATED, contacts: ALICE_CONTACTS },
    { member: '1002', name: 'Bob', created: CREATED, contacts: [{ kind: 'telegram', value: '4242', verified: true }] },
  ])
}

forEachDialect('a signed-in user reads their own full profile, by default and by id', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  await withAliceAndBob(crm)
  const full = { crm_id: '1001', name: 'Alice', contacts: ALICE_CONTACTS, created: CREATED }
  assert.deepEqual((await crm.user(1001).info()).result, full)
  assert.deepEqual((await crm.user(1001).info('1001')).result, full)
})

forEachDialect('another user’s profile comes without its contacts', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  await withAliceAndBob(crm)
  // The attack: Bob asks for Alice's profile to learn her address and phone number.
  const seen = await crm.user(1002).info('1001')
  assert.equal(seen.status, 200)
  assert.deepEqual(seen.result, { crm_id: '1001', name: 'Alice', contacts: [], created: CREATED })
  // An app acting for Bob, with scopes that are not crm:read, sees no more.
  const viaApp = await crm.userInfo(
    { 'X-Crm': '1002', 'X-KeyType': 'user', 'X-Scopes': 'chat crm:write', 'X-AppId': '7' },
    '1001',
  )
  assert.deepEqual(viaApp.result.contacts, [])
})

forEachDialect('a service key or the crm:read scope reads any full profile', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  await withAliceAndBob(crm)
  const full = { crm_id: '1001', name: 'Alice', contacts: ALICE_CONTACTS, created: CREATED }
  assert.deepEqual((await crm.userInfo({ 'X-KeyType': 'service', 'X-AppId': '9' }, '1001')).result, full)
  assert.deepEqual(
    (await crm.userInfo({ 'X-KeyType': 'app', 'X-AppId': '9', 'X-Scopes': 'crm:read' }, '1001')).result,
    full,
  )
  assert.deepEqual(
    (await crm.userInfo({ 'X-Crm': '1002', 'X-KeyType': 'session', 'X-Scopes': 'chat crm:read' }, '1001')).result,
    full,
  )
  const noId = await crm.userInfo({ 'X-KeyType': 'service' })
  assert.equal(noId.status, 400, 'a key without a user must name whose profile')
  assert.equal(noId.error?.code, 1000)
})

forEachDialect('anonymous callers, and apps without crm:read, are refused', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  await withAliceAndBob(crm)
  const anonymous = await crm.userInfo({}, '1001')
  assert.equal(anonymous.status, 401)
  assert.equal(anonymous.error?.code, 1008)
  assert.equal(anonymous.result, undefined)
  const app = await crm.userInfo({ 'X-KeyType': 'app', 'X-AppId': '9', 'X-Scopes': 'chat' }, '1001')
  assert.equal(app.status, 403)
  assert.equal(app.error?.code, 1009)
})

forEachDialect('an unknown id answers 404 and a malformed one 400', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  await withAliceAndBob(crm)
  const unknown = await crm.user(1001).info('1003')
  assert.equal(unknown.status, 404)
  assert.equal(unknown.error?.code, 1004)
  const notRegistered = await crm.user(1003).info()
  assert.equal(notRegistered.status, 404, 'a signed-in user the gateway has not pushed yet')
  for (const bad of ['0', 'abc', '-5', '1.5', '12345678901234567', '9999999999999999', '1001 ', '%00']) {
    const refused = await crm.user(1001).info(bad)
    assert.equal(refused.status, 400, `crm_id=${JSON.stringify(bad)}: ${JSON.stringify(refused)}`)
    assert.equal(refused.error?.code, 1000)
  }
  const extra = await crm.call('GET', '/crm/v1/user_info?crm_id=1001&email=1', { 'X-Crm': '1002' })
  assert.equal(extra.status, 400, 'unknown query parameters are refused')
})

forEachDialect('a forged X-Crm without the gateway’s hop signature is refused', async (t, dialect) => {
  const crm = await startCrm(t, dialect)
  await withAliceAndBob(crm)
  const path = '/crm/v1/user_info?crm_id=1001'
  const forged = await fetch(`${crm.base}${path}`, { headers: { 'X-Crm': '1001', 'X-KeyType': 'service' } })
  assert.equal(forged.status, 401)
  const body = await json(forged)
  assert.equal(body.error.code, 1008)
  assert.equal(body.result, undefined, 'no profile leaks')

  // A real signature for Bob, with X-Crm changed afterwards to Alice: the signature covers it.
  const signed = signedHeaders(SERVICE_SECRET, 'GET', path, { 'x-crm': '1002' })
  const honest = await json(await fetch(`${crm.base}${path}`, { headers: signed }))
  assert.deepEqual(honest.result.contacts, [], 'signed as Bob, the request is answered as Bob')
  const swapped = await fetch(`${crm.base}${path}`, { headers: { ...signed, 'x-crm': '1001' } })
  assert.equal(swapped.status, 401)
  const replayed = await fetch(`${crm.base}/crm/v1/user_info?crm_id=1002`, { headers: signed })
  assert.equal(replayed.status, 401, 'a signature is for one path and query')
})
