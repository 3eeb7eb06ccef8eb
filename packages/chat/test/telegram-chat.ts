import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { createMigratedTestDatabaseUrl, listen } from '@atrium/platform/testing'
import { buildChat } from '../src/app.ts'
import { loadChatConfig } from '../src/config.ts'
import { chatMigrations } from '../src/db/migrations/index.ts'
import { type CallResult, createChatClient, SERVICE_SECRET } from './support.ts'
import { BOT_TOKEN, type BotApi, startBotApi, WEBHOOK_SECRET } from './telegram-bot-api.ts'

export interface TelegramChatOptions {
  /** Telegram settings over the webhook defaults below. */
  telegram?: Record<string, unknown>
  /** Other chat settings. */
  settings?: Record<string, unknown>
  /** The module's clock (link expiry, notification throttling). */
  now?: () => number
  /** An existing database URL, e.g. to read its tables in the test. */
  url?: string
  /** An existing local Bot API server, e.g. for a second instance or a restarted module. */
  api?: BotApi
}

/**
 * Starts a local Bot API server and the chat module with the bot pointed at it, in webhook mode
 * unless `telegram.Updates` says otherwise; `update()` posts an update as the gateway would
 * forward Telegram's, with the secret header.
 */
export async function startTelegramChat(t: TestContext, dialect: DatabaseDialect, options: TelegramChatOptions = {}) {
  const api: BotApi = options.api ?? (await startBotApi(t))
  const url = options.url ?? (await createMigratedTestDatabaseUrl(t, dialect, chatMigrations))
  const config = loadChatConfig(
    {
      ChatDB: url,
      ServiceSecret: SERVICE_SECRET,
      TelegramBot: BOT_TOKEN,
      Telegram: {
        ApiRoot: api.root,
        Updates: 'webhook',
        WebhookUrl: 'https://example.test/telegram/v1/webhook',
        WebhookSecret: WEBHOOK_SECRET,
        ChatUrl: 'https://example.test/chat/',
        ...options.telegram,
      },
      ...options.settings,
    },
    {},
  )
  const app = await buildChat(config, { logger: { level: 'error' }, ...(options.now ? { now: options.now } : {}) })
  const chat = createChatClient(await listen(t, app))
  return {
    api,
    chat,
    /** Closes the chat module before the test ends (also closed after it). */
    close: () => app.close(),
    /** Posts one update to the webhook with the secret header (null: without the header). */
    update(update: object, secret: string | null = WEBHOOK_SECRET): Promise<CallResult> {
      const headers: Record<string, string> = secret === null ? {} : { 'X-Telegram-Bot-Api-Secret-Token': secret }
      return chat.call('POST', '/telegram/v1/webhook', headers, update)
    },
    /** The texts the bot sent to one Telegram chat, in order. */
    sentTo(chatId: number): string[] {
      return api
        .callsOf('sendMessage')
        .filter((call) => Number(call.params.chat_id) === chatId)
        .map((call) => String(call.params.text))
    },
  }
}

export type TelegramChat = Awaited<ReturnType<typeof startTelegramChat>>

/** The one-time token in a link_telegram deep link. */
export function startTokenOf(url: string): string {
  const match = /^https:\/\/t\.me\/atrium_test_bot\?start=([A-Za-z0-9_-]{32})$/.exec(url)
  if (!match) throw new Error(`not a deep link of the test bot: ${url}`)
  return match[1]!
}
