import {
  databaseCheck,
  installDatabaseMetrics,
  installReadiness,
  type MetricsOptions,
  type ReadinessCheck,
  type Service,
} from '@atrium/platform'
import { OPERATOR_SCOPE } from '../admin/admin-shell.ts'
import { requireScope } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import type { GatewayStore } from '../store.ts'

/** The health endpoint every module serves without a signature (platform service.ts). */
const MODULE_HEALTH_PATH = '/private/v1/health'

/**
 * Where the gateway's metrics are read (docs/operations.md, "Metrics"): `GET /auth/v1/metrics`
 * by a caller with the admin scope, and Prometheus on the metrics listener (Metrics.*).
 */
export function gatewayMetricsOptions(config: Pick<GatewayConfig, 'Metrics'>): MetricsOptions {
  return {
    path: '/auth/v1/metrics',
    authorize: (request) => requireScope(request.caller, OPERATOR_SCOPE, 'Metrics are read with the admin scope.'),
    listener: config.Metrics,
  }
}

/**
 * The database's metrics and `GET /auth/v1/ready`: ready while the database and every required
 * module answer (liveness stays `/auth/v1/health`, which asks nothing).
 */
export function installOperatorSignals(
  app: Service,
  { config, store }: { config: Pick<GatewayConfig, 'Modules' | 'Readiness'>; store: Pick<GatewayStore, 'database'> },
): void {
  installDatabaseMetrics(app.metrics.registry, store.database)
  installReadiness(app, {
    path: '/auth/v1/ready',
    timeoutMs: config.Readiness.TimeoutMs,
    checks: { database: databaseCheck(store.database), ...moduleReadinessChecks(config) },
  })
}

/**
 * A readiness check per module the gateway requires: every module in Modules but those listed in
 * Readiness.OptionalModules. A module is up when its health endpoint answers 2xx in time.
 */
function moduleReadinessChecks(config: Pick<GatewayConfig, 'Modules' | 'Readiness'>): Record<string, ReadinessCheck> {
  const optional = new Set(config.Readiness.OptionalModules)
  const checks: Record<string, ReadinessCheck> = {}
  for (const [module, baseUrl] of Object.entries(config.Modules)) {
    if (optional.has(module)) continue
    const url = new URL(MODULE_HEALTH_PATH, baseUrl).toString()
    checks[module] = async (signal) => {
      const response = await fetch(url, { signal })
      await response.body?.cancel()
      if (!response.ok) throw new Error(`${module} health answered ${response.status}`)
    }
  }
  return checks
}
