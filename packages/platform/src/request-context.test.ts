import assert from 'node:assert/strict'
import { request } from 'node:http'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { Type } from 'typebox'
import { installServiceAuth, signedHeaders } from './identity.ts'
import { currentRequestId } from './request-context.ts'
import { createService } from './service.ts'
import { json, listen } from './testing/http.ts'

const SECRET = 'request-context-test-secret'.padEnd(40, '-')

function logLines() {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)))
      done()
    },
  })
  return { lines, stream }
}

function service(name: string, stream: Writable) {
  return createService({
    name,
    version: '1.2.3',
    healthPath: '/private/v1/health',
    domainGuard: { domain: null, devHost: '' },
    logger: { level: 'info', stream },
  })
}

test('a call made while handling a request carries its X-Request-Id, and both services log that id', async (t) => {
  const backLog = logLines()
  const back = service('back', backLog.stream)
  installServiceAuth(back, { secret: SECRET, exempt: [] })
  back.get('/private/v1/who', async (request) => {
    request.log.info('answering the front')
    return { seen: request.id }
  })
  const backUrl = await listen(t, back)

  const frontLog = logLines()
  const front = service('front', frontLog.stream)
  // A JSON body: the handler runs after the body was read, from the request stream's events.
  front.post('/ask', { schema: { body: Type.Object({ question: Type.String() }) } }, async () => {
    await new Promise((resolve) => setTimeout(resolve, 5))
    const url = `${backUrl}/private/v1/who`
    const answer = await json(await fetch(url, { headers: signedHeaders(SECRET, 'GET', url) }))
    return answer.result
  })
  const frontUrl = await listen(t, front)

  const response = await fetch(`${frontUrl}/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'trace-hop-1' },
    body: JSON.stringify({ question: 'who' }),
  })
  assert.equal(response.status, 200)
  assert.equal(response.headers.get('x-request-id'), 'trace-hop-1')
  assert.deepEqual((await json(response)).result, { seen: 'trace-hop-1' })
  const backLines = backLog.lines.filter((line) => line.msg === 'answering the front')
  assert.deepEqual(
    backLines.map((line) => line.reqId),
    ['trace-hop-1'],
  )
  assert.ok(frontLog.lines.some((line) => line.reqId === 'trace-hop-1' && line.msg === 'request completed'))
})

test('each request gets its own id on the next hop, and work outside a request sends none', async (t) => {
  const back = service('back', logLines().stream)
  back.get('/seen', async (request) => ({ header: request.headers['x-request-id'] ?? '' }))
  const backUrl = await listen(t, back)
  const front = service('front', logLines().stream)
  front.get('/ask', async () => {
    const url = `${backUrl}/seen`
    return (await json(await fetch(url, { headers: signedHeaders(SECRET, 'GET', url) }))).result
  })
  const frontUrl = await listen(t, front)

  const answers = await Promise.all(
    ['first-1', 'second-2', 'third-3'].map(async (id) => {
      const response = await fetch(`${frontUrl}/ask`, { headers: { 'x-request-id': id } })
      return (await json(response)).result.header
    }),
  )
  assert.deepEqual(answers, ['first-1', 'second-2', 'third-3'])
  assert.equal((signedHeaders(SECRET, 'GET', `${backUrl}/seen`) as Record<string, string>)['x-request-id'], undefined)
})

test('the handler of a body that arrives late still runs as part of its request', async (t) => {
  const app = service('slow', logLines().stream)
  app.post('/ask', { schema: { body: Type.Object({ q: Type.String() }) } }, async () => ({
    id: currentRequestId() ?? 'none',
  }))
  const url = await listen(t, app)
  const answer = await new Promise<string>((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'x-request-id': 'late-body-1' }
    const call = request(`${url}/ask`, { method: 'POST', headers }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () => resolve(text))
    })
    call.on('error', reject)
    // Half the body now, the rest in a later packet: the handler runs from the stream's 'end'.
    call.write('{"q":')
    setTimeout(() => call.end('"x"}'), 50)
  })
  assert.deepEqual(JSON.parse(answer).result, { id: 'late-body-1' })
})
