import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { ChatConfig } from '../config.ts'
import type { ChatDatabase } from '../db/schema.ts'
import type { OtpSender } from '../delivery/otp-channels.ts'
import { otpLine } from '../delivery/templates.ts'
import type { Store } from '../store.ts'
import { createNotificationsRepository } from './notifications.repository.ts'
import { createTelegramRepository } from './telegram.repository.ts'
import { createTelegramBot } from './telegram-bot.ts'
import { createTelegramNotifier } from './telegram-notifier.ts'
import { createWidgetBot } from './widgets/widget-bot.ts'
import { createStatsReader } from './widgets/widget-stats.ts'
import { createWidgetsRepository } from './widgets/widgets.repository.ts'

export interface TelegramOptions {
  config: ChatConfig
  store: Store
  db: Kysely<ChatDatabase>
  log: FastifyBaseLogger
  now: () => number
}

/**
 * The Telegram capability's parts for app.ts: the links, the bot (undefined while TelegramBot is
 * empty), the OTP sender and linked-chat lookup for SendOTP, the widgets and the stats they show
 * (for /ChatAdmin/BotWidgets), and start/stop of updates, notifications and widget refreshing.
 */
export function createTelegram({ config, store, db, log, now }: TelegramOptions) {
  const links = createTelegramRepository(db)
  const settings = config.Telegram
  const bot = config.TelegramBot
    ? createTelegramBot({ token: config.TelegramBot, settings, links, log, now })
    : undefined
  const notifier =
    bot && settings.Notifications
      ? createTelegramNotifier({
          notices: createNotificationsRepository(db),
          profiles: store.profiles,
          events: store.events,
          bot,
          intervalSeconds: settings.NotifyIntervalSeconds,
          chatUrl: settings.ChatUrl,
          log,
          now,
        })
      : undefined
  const widgets = createWidgetsRepository(db)
  const readStats = createStatsReader(db, config.Support.EscalateAfterSeconds)
  const widgetBot =
    bot &&
    createWidgetBot({
      bot,
      links,
      widgets,
      scopesOf: (member) => store.profiles.scopesOf(member),
      readStats,
      settings: settings.Widgets,
      log,
      now,
    })
  const otpSender: OtpSender | undefined = bot && {
    async send(to, otp) {
      await bot.sendText(Number(to), `${otpLine(otp.code, otp.purpose)}\n\nDo not share it with anyone.`)
    },
  }

  let receiving: Promise<void> | undefined
  return {
    links,
    bot,
    otpSender,
    widgets,
    readStats,
    /** The Telegram chat id a person linked, as SendOTP names destinations. */
    async chatOf(crmId: number): Promise<string | undefined> {
      if (!bot) return undefined
      const link = await links.linkOf(crmId)
      return link && String(link.telegramChatId)
    },
    /** Starts notifications, and receiving in the background: a slow Bot API never holds up the module's start. */
    async start(): Promise<void> {
      if (!bot) return
      await notifier?.start()
      widgetBot?.start()
      receiving = bot.start()
    },
    async stop(): Promise<void> {
      await notifier?.stop()
      await widgetBot?.stop()
      await receiving
      await bot?.stop()
    },
  }
}
