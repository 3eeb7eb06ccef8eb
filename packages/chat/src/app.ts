import {
  buildInfo,
  createDatabase,
  createService,
  createTimetickGenerator,
  databaseCheck,
  installDatabaseMetrics,
  installOpenApi,
  installReadiness,
  installServiceAuth,
  migrateToLatest,
  processVersion,
  type Service,
  warnNewerSchema,
} from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import chatPackage from '../package.json' with { type: 'json' }
import { installAcceptedText } from './accepted-text.ts'
import chatAdminPlugin from './admin/admin.plugin.ts'
import { botWidgetsPages } from './admin/bot-widgets-page.ts'
import { createCallerResolver } from './caller.ts'
import callsPlugin from './calls/calls.plugin.ts'
import { internalCallsPlugin } from './calls/internal-calls.plugin.ts'
import chatsPlugin from './chats/chats.plugin.ts'
import type { ChatConfig } from './config.ts'
import { chatMigrations } from './db/migrations/index.ts'
import type { ChatDatabase } from './db/schema.ts'
import deliveryPlugin from './delivery/delivery.plugin.ts'
import { createDeliveryMetrics } from './delivery/delivery-metrics.ts'
import { createMailer } from './delivery/mailer.ts'
import { createOutbox } from './delivery/outbox.ts'
import smsPlugin, { smsCallbacksPlugin } from './delivery/sms/sms.plugin.ts'
import { createSmsDelivery } from './delivery/sms/sms-delivery.ts'
import { createSmsMessagesRepository } from './delivery/sms/sms-messages.repository.ts'
import { smsProviderSettings } from './delivery/sms/sms-settings.ts'
import discussionsPlugin from './discussions/discussions.plugin.ts'
import { startEventRetention } from './events/event-retention.ts'
import eventsPlugin from './events/events.plugin.ts'
import feedbackPlugin from './feedback/feedback.plugin.ts'
import filesPlugin from './files/files.plugin.ts'
import internalPlugin from './internal/internal.plugin.ts'
import invitesPlugin from './invites/invites.plugin.ts'
import mailPlugin from './mail/mail.plugin.ts'
import { createMailReplies } from './mail/mail-replies.ts'
import membersPlugin from './members/members.plugin.ts'
import messageActionsPlugin from './messages/message-actions.plugin.ts'
import messagesPlugin from './messages/messages.plugin.ts'
import { internalProfilesPlugin, profilesPlugin } from './profiles/profiles.plugin.ts'
import searchPlugin from './search/search.plugin.ts'
import { indexLeftovers } from './search/search-index.ts'
import { createStore } from './store.ts'
import supportPlugin, { internalSupportPlugin } from './support/support.plugin.ts'
import telegramPlugin from './telegram/telegram.plugin.ts'
import { createTelegram } from './telegram/telegram.ts'
import telegramInternalPlugin from './telegram/telegram-internal.plugin.ts'
import telegramWebhookPlugin from './telegram/telegram-webhook.plugin.ts'
import unreadPlugin from './unread/unread.plugin.ts'

export interface ChatOptions {
  logger?: FastifyServerOptions['logger']
  /** The clock support escalations are measured against (tests move it instead of waiting). */
  now?: () => number
}

const HEALTH_PATH = '/private/v1/health'
const READY_PATH = '/private/v1/ready'
const OPENAPI_PATH = '/private/v1/openapi.json'
/** Version of the chat module's interface, shown in its OpenAPI document. */
export const CHAT_API_VERSION = '1.0.0'
// Replies to email senders follow this instance's posts at once and other instances' within this.
const MAIL_REPLY_POLL_MS = 2_000

/** Builds the chat module with every capability registered, its database migrated; the caller listens. */
export async function buildChat(
  config: ChatConfig,
  { logger = false, now = Date.now }: ChatOptions = {},
): Promise<Service> {
  const database = createDatabase<ChatDatabase>(config.ChatDB)
  let newerSchema: string[] = []
  let indexed = 0
  try {
    await migrateToLatest(database, chatMigrations, { onNewerSchema: (names) => (newerSchema = names) })
    if (database.dialect === 'sqlite') indexed = await indexLeftovers(database.db)
  } catch (error) {
    await database.destroy()
    throw error
  }
  const store = createStore(database, createTimetickGenerator({ node: config.NodeNumber }))

  const app = createService({
    name: 'chat',
    version: processVersion(chatPackage, 'chat'),
    healthPath: HEALTH_PATH,
    domainGuard: { domain: buildInfo?.domain ?? null, devHost: config.PlatformDevHost },
    logger,
    // Behind the signed hop like every other /private route; Prometheus reads the listener.
    metrics: { path: '/private/v1/metrics', listener: config.Metrics },
  })
  warnNewerSchema(app.log, newerSchema)
  if (indexed > 0) app.log.info({ indexed }, 'messages written while the module was stopped are now searchable')
  installServiceAuth(app, { secret: config.ServiceSecret, exempt: [HEALTH_PATH, READY_PATH, OPENAPI_PATH] })
  installDatabaseMetrics(app.metrics.registry, database)
  installReadiness(app, {
    path: READY_PATH,
    timeoutMs: config.Readiness.TimeoutMs,
    checks: { database: databaseCheck(database) },
  })
  await installOpenApi(app, {
    title: 'Atrium chat module',
    description:
      'Chat operations (/msg/v1, called through the gateway) and internal operations (/private/v1). See docs/chat-api.md.',
    version: CHAT_API_VERSION,
    path: OPENAPI_PATH,
    serviceAuth: true,
  })
  app.addHook('onClose', () => database.destroy())
  installAcceptedText(app)

  const resolveCaller = createCallerResolver(store.invites)
  const telegram = createTelegram({ config, store, db: database.db, log: app.log, now })
  app.addHook('onReady', () => telegram.start())
  app.addHook('preClose', () => telegram.stop())
  app.register(
    async function chatOperations(msg: Service) {
      msg.register(chatsPlugin, { store, resolveCaller, hardDelete: config.HardDelete.Chats })
      msg.register(membersPlugin, { store, resolveCaller })
      msg.register(messagesPlugin, {
        store,
        resolveCaller,
        serviceSecret: config.ServiceSecret,
        keyHours: config.IdempotencyKeyHours,
      })
      msg.register(messageActionsPlugin, { store, resolveCaller, hardDelete: config.HardDelete.Messages })
      msg.register(unreadPlugin, { store, resolveCaller })
      msg.register(invitesPlugin, { store, resolveCaller })
      msg.register(feedbackPlugin, { store, resolveCaller })
      msg.register(profilesPlugin, { store, resolveCaller })
      msg.register(searchPlugin, { store, resolveCaller })
      msg.register(supportPlugin, { store, resolveCaller, support: config.Support, now })
      msg.register(discussionsPlugin, { store, resolveCaller })
      msg.register(telegramPlugin, {
        links: telegram.links,
        bot: telegram.bot,
        resolveCaller,
        linkTtlMinutes: config.Telegram.LinkTtlMinutes,
        now,
      })
      msg.register(callsPlugin, { store, resolveCaller, calls: config.Calls, now })
    },
    { prefix: '/msg/v1' },
  )
  app.register(botWidgetsPages, {
    widgets: telegram.widgets,
    readStats: telegram.readStats,
    profiles: store.profiles,
    actions: store.adminActions,
    nextTick: store.nextTick,
    now,
    refreshSeconds: config.Telegram.Widgets.RefreshSeconds,
    minRefreshSeconds: config.Telegram.Widgets.MinRefreshSeconds,
  })
  app.register(internalProfilesPlugin, { prefix: '/private/v1', store })
  app.register(internalPlugin, { prefix: '/private/v1', store, hardDelete: config.HardDelete.Messages })
  app.register(filesPlugin, { prefix: '/private/v1', store })
  app.register(internalCallsPlugin, { prefix: '/private/v1', store })
  app.register(internalSupportPlugin, { prefix: '/private/v1', store, support: config.Support, now })
  const smsSettings = smsProviderSettings(config)
  const smsMessages = createSmsMessagesRepository(database.db)
  const sms =
    smsSettings.length > 0
      ? createSmsDelivery({ settings: smsSettings, messages: smsMessages, nextTick: store.nextTick })
      : undefined
  // One mail transport for every message the module sends: codes, links, resets and email replies.
  const outbox = createOutbox(config.Outbox.Path)
  const mailer = createMailer({
    transport: config.MailTransport,
    smtp: config.SmtpSettings,
    api: config.MailApi,
    outbox,
    log: app.log,
  })
  app.register(deliveryPlugin, {
    prefix: '/private/v1',
    mailer,
    outbox,
    development: buildInfo === null,
    sms: sms?.otpSender(app.log),
    telegram: telegram.otpSender,
    telegramChatOf: telegram.chatOf,
    metrics: createDeliveryMetrics(app.metrics.registry),
  })
  const smsOutbox = buildInfo === null ? outbox : undefined
  app.register(smsPlugin, { prefix: '/private/v1', sms, messages: smsMessages, outbox: smsOutbox })
  if (sms && config.Sms.CallbackBaseUrl) {
    const callbackBaseUrl = config.Sms.CallbackBaseUrl.replace(/\/+$/, '')
    app.register(smsCallbacksPlugin, {
      prefix: '/sms/v1',
      sms,
      messages: smsMessages,
      callbackBaseUrl,
      nextTick: store.nextTick,
      now,
    })
  }
  app.register(telegramInternalPlugin, { prefix: '/private/v1', links: telegram.links, bot: telegram.bot })
  if (telegram.bot && config.Telegram.Updates === 'webhook')
    app.register(telegramWebhookPlugin, {
      prefix: '/telegram/v1',
      bot: telegram.bot,
      secret: config.Telegram.WebhookSecret,
    })
  const mailReplies = createMailReplies({ store, mailer, log: app.log, pollMs: MAIL_REPLY_POLL_MS })
  app.register(mailPlugin, {
    prefix: '/private/v1',
    store,
    serviceSecret: config.ServiceSecret,
    onContact: mailReplies.activate,
  })
  app.addHook('onReady', () => mailReplies.start())
  app.addHook('preClose', () => mailReplies.close())
  app.register(chatAdminPlugin, {
    store,
    db: database.db,
    dialect: database.dialect,
    support: config.Support,
    now,
  })
  app.register(eventsPlugin, {
    prefix: '/private/v1',
    events: store.events,
    defaultLimit: config.Events.DefaultLimit,
    maxLimit: config.Events.MaxLimit,
    maxWaitMs: config.Events.MaxWaitMs,
    wakeWindowMs: config.Events.WakeWindowMs,
    activeGuests: store.invites.activeGuests,
  })
  // Registered as a plugin, its close hook runs before the root's, which destroys the database.
  app.register(async function eventRetention(instance: Service) {
    startEventRetention(instance, {
      events: store.events,
      retentionHours: config.Events.RetentionHours,
      sweepSeconds: config.Events.RetentionSweepSeconds,
      now,
    })
  })
  return app
}
