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
import { isConnectionFailure, type ModuleDirectory } from '../proxy/module-instances.ts'
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
  {
    config,
    store,
    modules,
  }: { config: Pick<GatewayConfig, 'Readiness'>; store: Pick<GatewayStore, 'database'>; modules: ModuleDirectory },
): void {
  installDatabaseMetrics(app.metrics.registry, store.database)
  installReadiness(app, {
    path: '/auth/v1/ready',
    timeoutMs: config.Readiness.TimeoutMs,
    checks: { database: databaseCheck(store.database), ...moduleReadinessChecks(config, modules) },
  })
}

/**
 * A readiness check per module the gateway requires: every module in Modules but those listed in
 * Readiness.OptionalModules. A module is up when the health endpoint of one of its instances
 * answers 2xx in time; every instance is asked, and what each did counts as it does for a request
 * (an instance that refused the connection is skipped for a while, one that answered is back).
 */
function moduleReadinessChecks(
  config: Pick<GatewayConfig, 'Readiness'>,
  modules: ModuleDirectory,
): Record<string, ReadinessCheck> {
  const optional = new Set(config.Readiness.OptionalModules)
  const checks: Record<string, ReadinessCheck> = {}
  for (const module of modules.names()) {
    if (optional.has(module)) continue
    const instances = modules.get(module)!
    checks[module] = async (signal) => {
      const answers = await Promise.allSettled(
        instances.states().map(async ({ origin }) => {
          let response: Response
          try {
            response = await fetch(new URL(MODULE_HEALTH_PATH, origin), { signal })
          } catch (error) {
            if (isConnectionFailure((error as Error).cause)) instances.failed(origin)
            throw error
          }
          await response.body?.cancel()
          instances.answered(origin)
          if (!response.ok) throw new Error(`${origin} health answered ${response.status}`)
        }),
      )
      const failures = answers.filter((answer) => answer.status === 'rejected')
      if (failures.length === answers.length) {
        throw new Error(`${module}: ${failures.map((failure) => String(failure.reason)).join('; ')}`)
      }
    }
  }
  return checks
}
