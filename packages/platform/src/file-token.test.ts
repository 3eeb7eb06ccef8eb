import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { test } from 'node:test'
import { type FileClaim, signFileToken, verifyFileToken } from './file-token.ts'
import { signHop } from './identity.ts'

const SECRET = 'a-service-secret-of-at-least-32-characters'
const NOW = 1_800_000_000_000
const claim: FileClaim = {
  id: 123456789,
  owner: 42,
  name: 'report "Q3".pdf',
  size: 1024,
  type: 'application/pdf',
  expires: NOW + 1000,
}

test('a signed file token gives back exactly its claim', () => {
  assert.deepEqual(verifyFileToken(SECRET, signFileToken(SECRET, claim), NOW), { claim })
})

test('a file token made with another secret, changed, or past its time does not attach', () => {
  const token = signFileToken(SECRET, claim)
  const [payload, mac] = token.split('.') as [string, string]
  const forged = Buffer.from(JSON.stringify([claim.id, 7, claim.name, claim.size, claim.type, claim.expires])).toString(
    'base64url',
  )
  const cases: [string, string][] = [
    ['another secret', signFileToken(`${SECRET}-other`, claim)],
    ['another owner in the payload', `${forged}.${mac}`],
    ['a cut signature', `${payload}.${mac.slice(0, -1)}`],
    ['no signature', payload],
    ['empty', ''],
    ['a hop signature', signHop(SECRET, { method: 'GET', url: '/', headers: {} }, NOW)],
  ]
  for (const [what, candidate] of cases) {
    assert.deepEqual(verifyFileToken(SECRET, candidate, NOW), { problem: 'invalid' }, what)
  }
  assert.deepEqual(verifyFileToken(SECRET, token, claim.expires), { problem: 'expired' })
})

test('a validly signed payload of the wrong shape is refused, not trusted', () => {
  // Only the gateway signs, but the reader must not depend on that for its own safety.
  const sign = (fields: unknown) => {
    const payload = Buffer.from(JSON.stringify(fields)).toString('base64url')
    const mac = createHmac('sha256', SECRET).update('atrium file token v1\n').update(payload).digest('base64url')
    return `${payload}.${mac}`
  }
  assert.deepEqual(verifyFileToken(SECRET, sign([1, 2, 'a', 3, 'b', NOW + 1000]), NOW), {
    claim: { id: 1, owner: 2, name: 'a', size: 3, type: 'b', expires: NOW + 1000 },
  })
  for (const fields of [
    [1, 2, 'a', 3, 'b'],
    ['1', 2, 'a', 3, 'b', NOW + 1000],
    { id: 1 },
    [1, 2, 3, 3, 'b', NOW + 1000],
  ]) {
    assert.deepEqual(verifyFileToken(SECRET, sign(fields), NOW), { problem: 'invalid' }, JSON.stringify(fields))
  }
})
