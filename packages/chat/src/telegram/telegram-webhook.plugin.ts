import { createHash, timingSafeEqual } from 'node:crypto'
import { ApiError, type Service } from '@atrium/platform'
import type { Update } from 'grammy/types'
import { telegramUpdate } from './telegram.schema.ts'
import type { TelegramBot } from './telegram-bot.ts'

export interface TelegramWebhookPluginOptions {
  bot: TelegramBot
  /** Telegram.WebhookSecret: what X-Telegram-Bot-Api-Secret-Token must carry. */
  secret: string
}

const SECRET_HEADER = 'x-telegram-bot-api-secret-token'

// Digests have one length, so the comparison takes the same time whatever the header holds.
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/**
 * POST /webhook: the updates Telegram posts (setWebhook with secret_token), reached through the
 * gateway's `/telegram/` route. The secret header is checked before the body is even read.
 */
export default async function telegramWebhookPlugin(app: Service, { bot, secret }: TelegramWebhookPluginOptions) {
  const expected = digest(secret)
  app.addHook('onRequest', async (request) => {
    const given = request.headers[SECRET_HEADER]
    if (typeof given !== 'string' || !timingSafeEqual(digest(given), expected))
      throw new ApiError('TelegramWebhookRefused')
  })

  app.post('/webhook', { schema: telegramUpdate }, async (request) => {
    try {
      await bot.handleUpdate(request.body as Update)
    } catch (error) {
      // Only getMe can fail here (handlers' errors are logged by the bot); Telegram delivers again.
      request.log.error({ failure: String(error) }, 'Telegram: update not handled')
      throw new ApiError('TelegramUnavailable')
    }
    return { ok: true }
  })
}
