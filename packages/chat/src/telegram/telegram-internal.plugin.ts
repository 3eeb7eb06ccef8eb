import { ApiError, type Service } from '@atrium/platform'
import { maskChatId } from '../delivery/masking.ts'
import type { TelegramRepository } from './telegram.repository.ts'
import { sendToTelegram } from './telegram.schema.ts'
import type { TelegramBot } from './telegram-bot.ts'

export interface TelegramInternalPluginOptions {
  links: TelegramRepository
  /** Absent while TelegramBot is empty. */
  bot: TelegramBot | undefined
}

/** SendToTelegram (/private/v1, spec "Chat internal operations"): a text from a trusted module. */
export default async function telegramInternalPlugin(app: Service, { links, bot }: TelegramInternalPluginOptions) {
  app.post('/SendToTelegram', { schema: sendToTelegram }, async (request) => {
    const { crm_id, telegram_chat_id, text, parse_mode, disable_link_preview } = request.body
    if ((crm_id === undefined) === (telegram_chat_id === undefined))
      throw new ApiError('InvalidRequest', 'give exactly one of crm_id and telegram_chat_id')
    if (!bot) throw new ApiError('TelegramNotConfigured')
    let chatId = Number(telegram_chat_id)
    if (telegram_chat_id !== undefined && !Number.isSafeInteger(chatId))
      throw new ApiError('InvalidRequest', 'telegram_chat_id is not a Telegram chat id')
    if (crm_id !== undefined) {
      const link = await links.linkOf(Number(crm_id))
      if (!link) throw new ApiError('TelegramNotLinked', `user ${crm_id} has not linked Telegram`)
      chatId = link.telegramChatId
    }
    const messageId = await bot.sendText(chatId, text, {
      parseMode: parse_mode,
      disableLinkPreview: disable_link_preview,
    })
    request.log.info({ crm_id, to: maskChatId(String(chatId)) }, 'sent to Telegram')
    return { to: maskChatId(String(chatId)), message_id: String(messageId) }
  })
}
