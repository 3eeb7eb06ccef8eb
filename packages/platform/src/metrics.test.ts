import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createService } from './service.ts'
import { json, listen } from './testing/http.ts'
import { metricValue } from './testing/metrics.ts'

function createMeasuredService(listenerPort?: number) {
  const app = createService({
    name: 'measured',
    version: '1.2.3',
    healthPath: '/private/v1/health',
    domainGuard: { domain: null, devHost: '' },
    logger: false,
    metrics: {
      path: '/private/v1/metrics',
      listener: listenerPort === undefined ? undefined : { Listen: true, Host: '127.0.0.1', Port: listenerPort },
    },
  })
  app.get('/items/:id', async (request) => ({ id: (request.params as { id: string }).id }))
  return app
}

test('requests are counted by method, route pattern and status', async (t) => {
  const base = await listen(t, createMeasuredService())
  const read = async () => (await fetch(`${base}/private/v1/metrics`)).text()
  const labels = { method: 'GET', route: '/items/:id', status: '200' }
  const before = await read()
  const asked = 5
  for (let index = 0; index < asked; index++) assert.equal((await fetch(`${base}/items/${index}`)).status, 200)
  const misses = 3
  for (let index = 0; index < misses; index++) assert.equal((await fetch(`${base}/nowhere/${index}`)).status, 404)
  const after = await read()

  const count = 'atrium_http_request_duration_seconds_count'
  assert.equal(metricValue(after, count, labels) - metricValue(before, count, labels), asked)
  // Unrouted paths are one series, not one per path.
  const unmatched = { method: 'GET', route: 'unmatched', status: '404' }
  assert.equal(metricValue(after, count, unmatched) - metricValue(before, count, unmatched), misses)
  assert.doesNotMatch(after, /nowhere/)
  const sum = metricValue(after, 'atrium_http_request_duration_seconds_sum', labels)
  assert.ok(sum > 0 && sum < 10, `the durations add up to ${sum} s`)
  // Node's own process metrics come with it.
  assert.ok(metricValue(after, 'process_resident_memory_bytes') > 0)
})

test('the metrics listener answers /metrics on its own port and nothing else', async (t) => {
  const app = createMeasuredService(0)
  const base = await listen(t, app)
  const address = app.metrics.listenerAddress()
  assert.ok(address, 'the listener is up once the service listens')
  assert.equal(address.address, '127.0.0.1')
  const metricsUrl = `http://127.0.0.1:${address.port}`
  await fetch(`${base}/items/7`)

  const response = await fetch(`${metricsUrl}/metrics`)
  assert.equal(response.status, 200)
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  const text = await response.text()
  assert.equal(
    metricValue(text, 'atrium_http_request_duration_seconds_count', { route: '/items/:id', status: '200' }),
    1,
  )
  assert.equal((await fetch(`${metricsUrl}/items/7`)).status, 404)
  assert.equal((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status, 404)
  // The service's health answers on the service port, not here.
  assert.equal((await json(await fetch(`${base}/private/v1/health`))).result.status, 'ok')

  await app.close()
  await assert.rejects(fetch(`${metricsUrl}/metrics`), 'the listener closes with the service')
})

test('two services in one process keep separate registries', async (t) => {
  const first = createMeasuredService()
  const second = createMeasuredService()
  const [firstUrl, secondUrl] = await Promise.all([listen(t, first), listen(t, second)])
  await fetch(`${firstUrl}/items/1`)
  await fetch(`${firstUrl}/items/2`)
  const labels = { route: '/items/:id', status: '200' }
  const count = 'atrium_http_request_duration_seconds_count'
  assert.equal(metricValue(await (await fetch(`${firstUrl}/private/v1/metrics`)).text(), count, labels), 2)
  assert.equal(metricValue(await (await fetch(`${secondUrl}/private/v1/metrics`)).text(), count, labels), 0)
})
