import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isFailure, RequestError, readEnvelope } from './envelope.ts'

const reply = (status: number, body: string) => new Response(body, { status })

test('a success envelope resolves to its result', async () => {
  assert.deepEqual(await readEnvelope(reply(200, '{"result":{"chats":[]},"id":"r1"}')), { chats: [] })
})

test('an error envelope becomes a RequestError named after its code', async () => {
  const body = '{"error":{"code":3000,"message":"chat 5 not found"},"id":"req-9"}'
  await assert.rejects(readEnvelope(reply(404, body)), (error: unknown) => {
    assert.ok(error instanceof RequestError)
    assert.equal(error.kind, 'ChatNotFound')
    assert.equal(error.code, 3000)
    assert.equal(error.status, 404)
    assert.equal(error.requestId, 'req-9')
    assert.equal(error.message, 'chat 5 not found')
    assert.ok(isFailure(error, 'ChatNotFound'))
    assert.ok(!isFailure(error, 'SessionRequired'))
    return true
  })
  const details = [{ in: 'body', path: '/content', message: 'must be string' }]
  const invalid = JSON.stringify({ error: { code: 1000, message: 'body/content must be string', details }, id: 'a' })
  await assert.rejects(readEnvelope(reply(400, invalid)), { kind: 'InvalidRequest', details })
})

test('answers that are not envelopes are BadResponse, with the status', async () => {
  await assert.rejects(readEnvelope(reply(502, '<html>Bad gateway</html>')), { kind: 'BadResponse', status: 502 })
  await assert.rejects(readEnvelope(reply(200, '[1,2]')), { kind: 'BadResponse', status: 200 })
  await assert.rejects(readEnvelope(reply(500, '{"result":1}')), { kind: 'BadResponse', status: 500 })
  await assert.rejects(readEnvelope(reply(418, '{"error":{"code":9999,"message":"?"}}')), {
    kind: 'BadResponse',
    code: 9999,
  })
})
