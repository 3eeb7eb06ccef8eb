import { Counter, type Registry } from 'prom-client'
import type { UpstreamErrorKind } from './forward.ts'

/**
 * The proxy's metric `atrium_proxy_upstream_errors_total` by upstream and kind. Proxied requests'
 * rates and latencies are in the HTTP request metric, labelled with the route map prefix.
 */
export function createProxyMetrics(registry: Registry) {
  const errors = new Counter({
    name: 'atrium_proxy_upstream_errors_total',
    help: 'Proxied requests a module failed: timeout (504), failed (502), cut (body ended early), invalid_status.',
    labelNames: ['upstream', 'kind'] as const,
    registers: [registry],
  })
  return {
    upstreamError(upstream: string, kind: UpstreamErrorKind) {
      errors.inc({ upstream, kind })
    },
  }
}

export type ProxyMetrics = ReturnType<typeof createProxyMetrics>
