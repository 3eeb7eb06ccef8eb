import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Type } from 'typebox'
import { commonSettings, loadConfig } from './config.ts'
import { createPrettyLogStream } from './log-format.ts'
import { createService } from './service.ts'
import { listen } from './testing/http.ts'

test('pretty logs are one short line per request and warnings without a stack', async (t) => {
  let printed = ''
  const app = createService({
    name: 'example',
    version: '1.2.3',
    healthPath: '/private/v1/health',
    domainGuard: { domain: null, devHost: '' },
    logger: { level: 'info', stream: createPrettyLogStream((text) => (printed += text)) },
  })
  const url = await listen(t, app)

  await fetch(`${url}/private/v1/health?token=secret-in-query`)
  await fetch(`${url}/nowhere`)
  app.log.warn({ module: 'crm', err: new Error('connect ECONNREFUSED') }, 'events: the module failed')
  app.log.error({ err: new Error('a bug') }, 'something broke')

  const lines = printed.trimEnd().split('\n')
  const requests = lines.filter((line) => / ms$/.test(line))
  assert.match(requests[0] ?? '', /^\d\d:\d\d:\d\d GET \/private\/v1\/health 200 \d+ ms$/)
  assert.match(requests[1] ?? '', /^\d\d:\d\d:\d\d GET \/nowhere 404 \d+ ms$/)
  assert.ok(!printed.includes('secret-in-query'), 'no query in the line')
  assert.ok(!printed.includes('incoming request') && !printed.includes('{"level"'), printed)
  const warning = lines.find((line) => line.includes('WARN'))
  assert.match(
    warning ?? '',
    /^\d\d:\d\d:\d\d WARN events: the module failed module=crm \(Error: connect ECONNREFUSED\)$/,
  )
  assert.match(printed, /ERROR something broke \nError: a bug\n {4}at /, 'errors keep their stack')
})

test('LogFormat is json unless a process asks for pretty', () => {
  const schema = Type.Object(commonSettings({ host: 'localhost', port: 1 }))
  const base = { ServiceSecret: 'x'.repeat(32) }
  assert.equal(loadConfig(schema, { source: 'example', file: base, env: {} }).LogFormat, 'json')
  assert.equal(loadConfig(schema, { source: 'example', file: base, env: { LogFormat: 'pretty' } }).LogFormat, 'pretty')
  assert.throws(() => loadConfig(schema, { source: 'example', file: base, env: { LogFormat: 'fancy' } }), /LogFormat/)
})
