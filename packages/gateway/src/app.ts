import {
  buildInfo,
  buildLabel,
  createService,
  installOpenApi,
  processVersion,
  type Service,
  startBackgroundSweep,
  warnNewerSchema,
} from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import gatewayPackage from '../package.json' with { type: 'json' }
import adminPlugin from './admin/admin.plugin.ts'
import { createAdminActions } from './admin/admin-actions.repository.ts'
import { loadCountryLookup } from './audit/country.ts'
import { createAuthenticator } from './auth/authenticate.ts'
import { createCsrfCheck, leaveAppOriginsToCors } from './auth/csrf.ts'
import { installSignIn } from './auth/install-sign-in.ts'
import iceServersPlugin from './calls/ice-servers.plugin.ts'
import type { GatewayConfig } from './config.ts'
import { createCors } from './cors/cors.ts'
import { createDnsCheck } from './domains/dns-check.ts'
import domainsPlugin from './domains/domains.plugin.ts'
import { createProjectDomains } from './domains/domains.repository.ts'
import { createEventCursors } from './events/event-cursors.repository.ts'
import { createEventHub } from './events/event-hub.ts'
import { createEventMetrics } from './events/event-metrics.ts'
import eventsPlugin from './events/events.plugin.ts'
import { installFiles } from './files/install-files.ts'
import { type FileSweepReport, sweepFiles } from './files/upload-sweep.ts'
import { createGuestResolver } from './guests/guest-resolver.ts'
import internalPlugin from './internal/internal.plugin.ts'
import { installMailBridge } from './mail/install-mail-bridge.ts'
import { installMcp } from './mcp/install-mcp.ts'
import notificationsPlugin from './notifications/notifications.plugin.ts'
import serviceWorkerPlugin from './notifications/service-worker.ts'
import { createWebPush } from './notifications/web-push.ts'
import peoplePlugin from './people/people.plugin.ts'
import { createProfileSync } from './people/profile-sync.ts'
import { chatProfileTarget, crmProfileTarget } from './people/profile-targets.ts'
import { addConfiguredRoutes, type ConfiguredRoute } from './proxy/configured-routes.ts'
import { createModuleDirectory } from './proxy/module-instances.ts'
import proxyPlugin from './proxy/proxy.plugin.ts'
import { createProxyMetrics } from './proxy/proxy-metrics.ts'
import type { LimitLink } from './rate-limit/node-window.ts'
import { createCallerLimits, createConnectionLimit } from './rate-limit/rate-limits.ts'
import { workersUsage } from './rate-limit/usage-share.ts'
import { createAdmission } from './server/admission.ts'
import type { InvalidationRelay } from './server/invalidations.ts'
import { createModuleVersions, installModuleVersions } from './server/module-versions.ts'
import { createNodeMessages, type NodeBroadcast, type NodeMessages } from './server/node-messages.ts'
import { gatewayMetricsOptions, installOperatorSignals } from './server/operator-signals.ts'
import { readTlsFiles } from './server/tls.ts'
import { createSessionCookie } from './sessions/session-cookie.ts'
import { createChatAudience } from './signals/chat-audience.ts'
import { linkGateways } from './signals/gateway-links.ts'
import { createPresence, shareWithWorkers } from './signals/presence.ts'
import signalsPlugin from './signals/signals.plugin.ts'
import { createFrontPage } from './static/front-page.ts'
import { frontendPolicySettings } from './static/frontend-policy.ts'
import { loadFrontends } from './static/frontends.ts'
import staticPlugin from './static/static.plugin.ts'
import { type GatewayStore, openGatewayStore } from './store.ts'
import { installStun } from './stun/install-stun.ts'
import type { StunResponder } from './stun/stun-responder.ts'
import { createWebhookDispatcher } from './webhooks/webhook-dispatcher.ts'
import { createWebhookMetrics } from './webhooks/webhook-metrics.ts'
import { createWebhooks } from './webhooks/webhooks.repository.ts'

const OPENAPI_PATH = '/auth/v1/openapi.json'
/** Version of the gateway's own interface, shown in its OpenAPI document. */
export const GATEWAY_API_VERSION = '1.0.0'

export interface GatewayOptions {
  logger?: FastifyServerOptions['logger']
  /** Clock for sessions and challenges; tests move it to hit exact boundaries. */
  now?: () => number
  /**
   * This process's place among the node's workers (server/workers.ts, docs/operations.md
   * "Workers"); absent for a gateway that is the node's only process.
   */
  worker?: GatewayWorker
}

/** One of several gateway processes on one port. */
export interface GatewayWorker {
  /** 0 to Workers - 1; worker 0 alone sends pushes and webhooks, runs the sweeps, STUN and the mail bridge. */
  index: number
  /** Carries cache invalidations to the other workers. */
  relay: InvalidationRelay
  /** Sends node messages (typing, presence, typing-limit usage) to the other workers. */
  broadcast: NodeBroadcast
  /** This worker's end of the node's rate limits, which the primary counts (rate-limit/node-window.ts). */
  limits: LimitLink
}

export interface Gateway extends Service {
  store: GatewayStore
  /** Runs the file service's clean-up now, as the periodic sweep does (upload-sweep.ts). */
  sweepFiles(): Promise<FileSweepReport>
  /** Runs the MCP records' clean-up now, as the periodic sweep does (docs/mcp.md, "Audit"). */
  sweepMcp(): Promise<void>
  /** Pushes changed users to the chat and CRM modules now (people/profile-sync.ts); nothing without them. */
  syncProfiles(): Promise<void>
  /** The inbound email bridge's SMTP port; 0 while MailBridge.Enabled is false. */
  mailPort(): number
  /** The embedded STUN responder; `stun.listening()` settles once its sockets are bound after listen. */
  stun: StunResponder
  /** Messages from the node's other workers are handed in here (server/workers.ts). */
  nodeMessages: NodeMessages
  /**
   * Settles once this process hears the other gateway processes on its PostgreSQL gateway
   * database (limit usage, typing, presence); at once on SQLite.
   */
  linked(): Promise<void>
}

/** Builds the gateway with every capability registered and its database migrated; the caller listens. */
export async function buildGateway(nodeConfig: GatewayConfig, { logger = false, now, worker }: GatewayOptions = {}) {
  // Work done once per node stays in worker 0; each worker writes ids with its own node number.
  const singletons = (worker?.index ?? 0) === 0
  const config: GatewayConfig = singletons
    ? { ...nodeConfig }
    : { ...nodeConfig, PushSending: false, MailBridge: { ...nodeConfig.MailBridge, Enabled: false } }
  const nodeNumber = config.NodeNumber + (worker?.index ?? 0)
  // Each worker's metrics listener takes the next port after the one before it (0 stays 0: any free port).
  if (worker && config.Metrics.Port !== 0)
    config.Metrics = { ...config.Metrics, Port: config.Metrics.Port + worker.index }
  // Read before the database opens, so that a bad certificate or an oversized frontend leaks nothing.
  const tls = readTlsFiles(config.Tls)
  const frontends = await loadFrontends(config.Static)
  const store = await openGatewayStore(config, { node: nodeNumber }, now, worker?.relay)
  // On SQLite, typing, presence and limit usage go to the node's other workers (server/node-messages.ts).
  const nodeMessages = createNodeMessages(worker?.broadcast)
  const lookupCountry = await loadCountryLookup()
  const version = processVersion(gatewayPackage, 'gateway')
  const cors = createCors({ apps: store.apps, publicOrigin: config.PublicOrigin })

  const app = createService({
    name: 'gateway',
    version,
    healthPath: '/auth/v1/health',
    domainGuard: { domain: buildInfo?.domain ?? null, devHost: config.PlatformDevHost },
    logger,
    tls,
    trustedProxies: config.Proxy.TrustedProxies,
    metrics: gatewayMetricsOptions(config),
  })
  app.addHook('onClose', () => store.close())
  warnNewerSchema(app.log, store.newerSchema)
  // On a PostgreSQL gateway database limit usage, typing and presence go between every gateway
  // process, other nodes' included; on SQLite (one node) the node's workers pass them among themselves.
  const links = store.dialect === 'postgres' ? linkGateways(config.GatewayDB, app.log) : undefined
  if (links) app.addHook('onClose', () => links.close())
  // Every call to a module, proxied or the gateway's own, goes to an instance chosen here (docs/operations.md).
  const modules = createModuleDirectory(config.Modules, { backoffMs: config.Proxy.InstanceBackoffMs, log: app.log })
  app.addHook('onClose', () => modules.close())
  if (worker) {
    // Which process answered, for operators and the workers test.
    const index = String(worker.index)
    app.addHook('onSend', async (_request, reply) => {
      reply.header('x-atrium-worker', index)
    })
    app.frontDoor.onSend((_request, reply, payload) => {
      reply.header('x-atrium-worker', index)
      return payload
    })
  }
  installOperatorSignals(app, { config, store, modules })
  const moduleVersions = createModuleVersions({ config, gateway: { version, build: buildLabel() } })
  installModuleVersions(app, moduleVersions)
  await installOpenApi(app, {
    title: 'Atrium gateway',
    description: "The gateway's own endpoints under /auth/v1. See docs/gateway.md.",
    version: GATEWAY_API_VERSION,
    path: OPENAPI_PATH,
    // Declares X-Service-Auth for the /private routes, which set it as their own security.
    serviceAuth: true,
    securitySchemes: {
      sessionCookie: {
        type: 'apiKey',
        in: 'cookie',
        name: config.Sessions.CookieName,
        description:
          'The session cookie; POST, PUT, PATCH and DELETE also send the session CSRF token in X-CSRF-Token.',
      },
      bearer: { type: 'http', scheme: 'bearer', description: 'An API key (`atr_…`) or an AppLogin token.' },
      apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
    },
    security: [{ sessionCookie: [] }, { bearer: [] }, { apiKey: [] }],
  })

  // The request checks, in order, for Fastify's routes and the front door's alike (server/admission.ts).
  const admission = createAdmission(app)
  const rateLimits = { settings: config.RateLimits, now: store.now }
  admission.add(createConnectionLimit(rateLimits))
  const authenticate = createAuthenticator({ ...store, cookieName: config.Sessions.CookieName })
  admission.add((request) => {
    const caller = authenticate(request)
    if (caller instanceof Promise) {
      return caller.then((found) => {
        request.caller = found
      })
    }
    request.caller = caller
  })
  // The caller limits are counted for the node by its primary, exactly; on PostgreSQL usage also
  // goes between every gateway process, other nodes' included, every 100 ms. The typing limit's
  // usage goes to the node's other workers, or to every gateway process on PostgreSQL.
  const usage = links?.usage ?? workersUsage(nodeMessages)
  const callerLimits = createCallerLimits(rateLimits, {
    share: links?.usage,
    workers: worker?.limits,
    node: config.NodeNumber,
  })
  app.addHook('onClose', async () => callerLimits.close?.())
  admission.add(callerLimits.check)
  const { countBody, countReply, meterSent } = callerLimits
  if (countBody) app.addHook('preParsing', async (request, _reply, payload) => countBody(request, payload))
  if (countReply) {
    app.addHook('onSend', async (request, reply, payload) => countReply(request, reply, payload))
    app.frontDoor.onSend(countReply)
  }
  const cookie = createSessionCookie({
    name: config.Sessions.CookieName,
    domain: config.Sessions.CookieDomain,
    publicOrigin: config.PublicOrigin,
    maxAgeSeconds: config.Sessions.AbsoluteSeconds,
  })
  admission.add(cookie.clearStale)
  // Registered app origins pass the CSRF site check on the proxy's routes only, where its CORS
  // layer then judges them; the gateway's own routes (sign-in above all) refuse every foreign origin.
  admission.add(
    createCsrfCheck({ publicOrigin: config.PublicOrigin, allowedOrigin: (origin) => cors.isAppOrigin(origin) }),
  )

  // Every way to sign in, sessions, keys and the login audit (docs/gateway.md).
  const { challenges, loginAudit } = installSignIn(app, { config, store, modules, cookie, lookupCountry })
  app.register(internalPlugin, { prefix: '/private', users: store.users, serviceSecret: config.ServiceSecret })
  const projectDomains = createProjectDomains(store.db, store.nextTick, store.now)
  const checkDomain = createDnsCheck({
    servers: config.Dns.Servers,
    timeoutMs: config.Dns.TimeoutMs,
    tries: config.Dns.Tries,
  })
  app.register(domainsPlugin, {
    prefix: '/auth/v1',
    domains: projectDomains,
    checkDomain,
    recheckSeconds: config.Dns.RecheckSeconds,
  })

  // People: search, the own display name, and every user's name pushed to the chat module (docs/people.md).
  app.register(peoplePlugin, { prefix: '/auth/v1', users: store.users, now: store.now })
  // Guests have no session: the chat module says whom an invite code and device name (calls, event streams).
  const chat = modules.get('chat')
  const resolveGuest = chat ? createGuestResolver({ chat, serviceSecret: config.ServiceSecret }) : undefined
  // Calls: the ICE servers and TURN credentials a caller's browser needs (docs/calls.md).
  app.register(iceServersPlugin, {
    prefix: '/auth/v1',
    calls: config.Calls,
    publicOrigin: config.PublicOrigin,
    now: store.now,
    resolveGuest,
  })
  const eventCursors = createEventCursors(store.db, store.now)
  // One profile sync per module that keeps people: chat and the CRM, each with its own cursor.
  const profileTargets = [
    ...(chat ? [chatProfileTarget(chat)] : []),
    ...(modules.get('crm')
      ? [crmProfileTarget(modules.get('crm')!, { users: store.users, federation: store.federation })]
      : []),
  ]
  const profileSyncs = profileTargets.map((target) =>
    createProfileSync({
      target,
      serviceSecret: config.ServiceSecret,
      users: store.users,
      cursors: eventCursors,
      log: app.log,
    }),
  )
  app.addHook('onReady', async () => {
    if (singletons) for (const sync of profileSyncs) sync.start()
  })
  app.addHook('preClose', async () => {
    await Promise.all(profileSyncs.map((sync) => sync.close()))
  })

  const eventMetrics = createEventMetrics(app.metrics.registry)
  const events = createEventHub({
    modules,
    settings: config.Events,
    serviceSecret: config.ServiceSecret,
    cursors: eventCursors,
    log: app.log,
    metrics: eventMetrics,
  })
  // Before the server waits for open connections: SSE streams never end by themselves.
  app.addHook('preClose', () => events.close())
  // Presence and typing live in memory beside the streams (docs/events.md, "Typing and presence").
  const signals = links?.signals(events, createPresence())
  const presence = signals?.presence ?? shareWithWorkers(createPresence(), nodeMessages)
  app.register(eventsPlugin, {
    prefix: '/auth/v1',
    hub: events,
    apps: store.apps,
    settings: config.Events,
    meterSent,
    now: Date.now,
    presence,
    metrics: eventMetrics,
    resolveGuest,
    admission,
  })
  app.register(signalsPlugin, {
    prefix: '/auth/v1',
    hub: events,
    presence,
    node: nodeMessages,
    link: signals?.typing,
    usage,
    membersFor: createChatAudience({
      chat,
      serviceSecret: config.ServiceSecret,
      timeoutMs: config.Events.PollTimeoutMs,
    }),
  })
  // Web Push: subscriptions on every node; pushes only from the node with PushSending.
  const webPush = createWebPush({ config, store, chat, hub: events, log: app.log, registry: app.metrics.registry })
  app.addHook('onReady', async () => webPush.dispatcher?.start())
  app.addHook('preClose', () => webPush.close())
  app.register(notificationsPlugin, {
    prefix: '/auth/v1',
    settings: config.WebPush,
    subscriptions: webPush.subscriptions,
    dispatcher: webPush.dispatcher,
    nextTick: store.nextTick,
  })
  app.register(serviceWorkerPlugin)
  // Webhooks go out only from the node with PushSending (spec: "Deployment configuration").
  if (config.PushSending) {
    const webhookRows = createWebhooks(store.db, store.nextTick)
    const webhooks = createWebhookDispatcher({
      apps: store.apps,
      webhooks: webhookRows,
      feeds: events.feeds,
      settings: config.Webhooks,
      events: config.Events,
      log: app.log,
      metrics: createWebhookMetrics(app.metrics.registry, webhookRows),
    })
    app.addHook('onReady', () => webhooks.start())
    app.addHook('preClose', () => webhooks.close())
  }

  // Resumable uploads and downloads (docs/files.md).
  const files = installFiles(app, {
    config,
    modules,
    now: store.now,
    db: store.db,
    dialect: store.dialect,
    nextTick: store.nextTick,
  })

  const sweepMcp = async () => {
    await store.mcpAudit.sweep(store.now() - config.Mcp.AuditRetentionDays * 86_400_000)
    await store.mcpGrants.sweep()
  }
  if (singletons) {
    const everyMs = config.Sessions.SweepSeconds * 1000
    startBackgroundSweep(app, everyMs, 'session sweep', () => store.sessions.sweep())
    startBackgroundSweep(app, everyMs, 'sign-in challenge sweep', () => challenges.sweep())
    startBackgroundSweep(app, everyMs, 'file sweep', () => sweepFiles(files))
    startBackgroundSweep(app, everyMs, 'MCP audit sweep', sweepMcp)
  }

  // The embedded STUN responder and its diagnostics (docs/stun.md).
  const { stun, stunReports } = await installStun(app, { config, store, bind: singletons })

  // The inbound email bridge (docs/delivery.md), when MailBridge.Enabled.
  const mailBridge = installMailBridge(app, { config, store, modules, tls, files })

  // MCP for AI assistants and what a user's assistants may do (docs/mcp.md).
  installMcp(app, { config, store, modules, lookupCountry, version: GATEWAY_API_VERSION })

  // The operator panel (docs/admin.md): server-rendered pages for users with the admin scope.
  app.register(adminPlugin, {
    actions: createAdminActions(store.db, store.nextTick, store.now),
    users: store.users,
    sessions: store.sessions,
    apiKeys: store.apiKeys,
    routes: store.routes,
    moduleNames: Object.keys(config.Modules),
    moduleVersions,
    loginAudit,
    subscriptions: webPush.subscriptions,
    dispatcher: webPush.dispatcher,
    nextTick: store.nextTick,
    responder: stun,
    stunReports,
    stunEnabled: config.Stun.Enabled,
    apps: store.apps,
    reloadMs: config.Proxy.RouteReloadMs,
    domains: projectDomains,
    checkDomain,
    federation: store.federation,
    config,
  })

  // The frontends' mounts are more specific than the proxy's catch-all, so they win in the router.
  app.register(staticPlugin, { loaded: frontends, admission, policy: frontendPolicySettings(config) })

  const added = await addConfiguredRoutes(store.routes, config.Proxy.Routes as ConfiguredRoute[]).catch(
    async (error: unknown) => {
      await app.close()
      throw error
    },
  )
  if (added.length > 0) app.log.info({ routes: added }, 'added the configured routes missing from the route map')

  // Last: the proxy's catch-all route takes every path no gateway route claims. Its routes have a
  // CORS layer, so the CSRF site check leaves registered app origins to it.
  await app.register(async function proxiedRoutes(scope) {
    leaveAppOriginsToCors(scope)
    await scope.register(proxyPlugin, {
      routes: store.routes,
      cors,
      modules,
      settings: config.Proxy,
      serviceSecret: config.ServiceSecret,
      cookieName: config.Sessions.CookieName,
      lookupCountry,
      unrouted: await createFrontPage(frontends),
      metrics: createProxyMetrics(app.metrics.registry),
      admission,
      countBody,
    })
  })

  return Object.assign(app, {
    store,
    sweepFiles: () => sweepFiles(files),
    sweepMcp,
    syncProfiles: async () => {
      await Promise.all(profileSyncs.map((sync) => sync.flush()))
    },
    mailPort: () => mailBridge?.port() ?? 0,
    stun,
    nodeMessages,
    linked: async () => links?.listening(),
  }) as Gateway
}
