import { TIMETICK_PATTERN } from '@atrium/platform'
import { Type } from 'typebox'
import { TELEGRAM_TEXT_MAX } from './telegram-bot.ts'

const LinkState = Type.Object({
  available: Type.Boolean({ description: 'False while the chat module has no bot token (TelegramBot).' }),
  linked: Type.Boolean(),
  telegram_name: Type.String({
    description: 'The linked Telegram user, e.g. `Ada Lovelace (@ada)`; empty when not linked.',
  }),
  notifications: Type.Boolean({ description: 'Chat notifications go to Telegram.' }),
})

/** GET /msg/v1/get_telegram_link: is the caller's Telegram linked, and to whom. */
export const getTelegramLink = { response: { 200: LinkState } }

/** POST /msg/v1/link_telegram: a one-time deep link that links the caller's Telegram account. */
export const linkTelegram = {
  body: Type.Object({}, { additionalProperties: false }),
  response: {
    200: Type.Object({
      url: Type.String({ description: '`https://t.me/<bot>?start=<token>`: opens the bot, which links on Start.' }),
      bot_username: Type.String(),
      expires_at: Type.String({ description: 'ISO 8601 time after which the link is refused.' }),
    }),
  },
}

/** POST /msg/v1/unlink_telegram. */
export const unlinkTelegram = { body: Type.Object({}, { additionalProperties: false }), response: { 200: LinkState } }

/** POST /msg/v1/set_telegram_notifications. */
export const setTelegramNotifications = {
  body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
  response: { 200: LinkState },
}

/** POST /private/v1/SendToTelegram: a text to a person's linked Telegram, or to a Telegram chat id. */
export const sendToTelegram = {
  body: Type.Object(
    {
      crm_id: Type.Optional(
        Type.String({ pattern: TIMETICK_PATTERN, description: 'The person; their linked Telegram chat is used.' }),
      ),
      telegram_chat_id: Type.Optional(
        Type.String({ pattern: '^-?[1-9][0-9]{0,15}$', description: 'A Telegram chat id, instead of crm_id.' }),
      ),
      text: Type.String({
        minLength: 1,
        maxLength: TELEGRAM_TEXT_MAX,
        description: `The text, 1–${TELEGRAM_TEXT_MAX} characters (after entity parsing, as Telegram counts).`,
      }),
      parse_mode: Type.Optional(
        Type.Union([Type.Literal('HTML'), Type.Literal('MarkdownV2')], {
          description: 'Telegram formatting of the text; omitted: plain text.',
        }),
      ),
      disable_link_preview: Type.Optional(Type.Boolean({ default: false })),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      to: Type.String({ description: 'The masked Telegram chat id.' }),
      message_id: Type.String({ description: 'Telegram’s id of the sent message.' }),
    }),
  },
}

/** POST /telegram/v1/webhook: one Update as Telegram posts it. */
export const telegramUpdate = {
  body: Type.Object({ update_id: Type.Integer({ minimum: 0 }) }, { additionalProperties: true }),
}
