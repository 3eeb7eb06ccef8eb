import type { Service } from '@atrium/platform'
import type { GatewayConfig } from '../config.ts'
import type { GatewayStore } from '../store.ts'
import stunPlugin from './stun.plugin.ts'
import { createStunReports } from './stun-reports.repository.ts'
import { createStunResponder, stunBindTargets } from './stun-responder.ts'

/**
 * The embedded STUN responder, on UDP on the HTTP(S) port number once that is known, and its
 * diagnostics for signed-in clients (docs/stun.md). Returns the responder and the client reports
 * for the operator's STUN monitor. Without `bind` the UDP sockets stay closed (another worker has them).
 */
export async function installStun(
  app: Service,
  { config, store, bind = true }: { config: GatewayConfig; store: GatewayStore; bind?: boolean },
) {
  const stun = createStunResponder({
    software: config.Stun.Software,
    trackedSources: config.Stun.TrackedSources,
    threads: config.Stun.Threads,
    log: app.log,
  })
  // With several workers only worker 0 binds (Stun.Threads spreads its load over cores instead).
  if (config.Stun.Enabled && bind) {
    app.addHook('onListen', async () => {
      await stun.listen(stunBindTargets(app.addresses(), config.Stun)).then(
        (bound) => app.log.info({ stun: bound }, 'STUN responder listening on UDP'),
        (error: unknown) =>
          app.log.error({ err: error }, 'STUN responder could not bind; Binding requests go unanswered'),
      )
    })
  } else {
    await stun.listen([])
  }
  app.addHook('preClose', () => stun.close())
  const stunReports = createStunReports(store.db, store.nextTick, store.now, {
    perUser: config.Stun.ReportsPerUser,
    retentionMs: config.Stun.ReportRetentionHours * 3_600_000,
  })
  app.register(stunPlugin, {
    prefix: '/auth/v1',
    responder: stun,
    reports: stunReports,
    enabled: config.Stun.Enabled,
    reportsPerHour: config.Stun.ReportsPerHour,
    now: store.now,
  })
  return { stun, stunReports }
}
