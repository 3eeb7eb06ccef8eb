import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Histogram, Registry } from 'prom-client'
import { asMetric, RequestHistogram } from './request-histogram.ts'

const BUCKETS = [0.001, 0.01, 0.1, 1]
const OBSERVATIONS: [string, string, number, number][] = [
  ['GET', '/a', 200, 0.0005],
  ['GET', '/a', 200, 0.001],
  ['GET', '/a', 200, 0.05],
  ['GET', '/a', 404, 3],
  ['POST', '/a', 200, 0.2],
  ['GET', '/b "quoted"\\', 500, 0.002],
]

test('the request histogram is exposed exactly as prom-client’s Histogram exposes the same observations', async () => {
  const ours = new Registry()
  const histogram = new RequestHistogram('requests_seconds', 'How long requests took.', BUCKETS)
  ours.registerMetric(asMetric(histogram))
  const theirs = new Registry()
  const reference = new Histogram({
    name: 'requests_seconds',
    help: 'How long requests took.',
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [theirs],
  })
  for (const [method, route, status, seconds] of OBSERVATIONS) {
    histogram.observe(method, route, status, seconds)
    reference.observe({ method, route, status: String(status) }, seconds)
  }
  assert.equal(await ours.metrics(), await theirs.metrics())
  // The JSON form too, but for prom-client's exemplars, which are off (null) for this histogram.
  const withoutExemplars = (await theirs.getMetricsAsJSON()).map((metric) => ({
    ...metric,
    values: metric.values.map((line) => {
      const { exemplar, ...rest } = line as typeof line & { exemplar?: unknown }
      return rest
    }),
  }))
  assert.deepEqual(await ours.getMetricsAsJSON(), withoutExemplars)
  // Merged with another registry, as the exposition merges the process metrics.
  assert.equal(await Registry.merge([ours, new Registry()]).metrics(), await theirs.metrics())

  histogram.reset()
  reference.reset()
  assert.equal(await ours.metrics(), await theirs.metrics())
})
