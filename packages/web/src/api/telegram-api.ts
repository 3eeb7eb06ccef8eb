import type { ApiClient } from './client.ts'

const MSG = '/msg/v1'

/** The signed-in person's Telegram link (docs/chat-api.md, "Telegram"). */
export interface TelegramLinkState {
  /** False while the site has no Telegram bot. */
  available: boolean
  linked: boolean
  /** e.g. `Ada Lovelace (@ada)`; empty when not linked. */
  telegram_name: string
  notifications: boolean
}

/** A one-time deep link that opens the bot, which links the account on Start. */
export interface TelegramDeepLink {
  url: string
  bot_username: string
  expires_at: string
}

/** Linking Telegram for sign-in codes and chat notifications. */
export function createTelegramApi(client: ApiClient) {
  return {
    telegramLink: () => client.get<TelegramLinkState>(`${MSG}/get_telegram_link`),
    linkTelegram: () => client.post<TelegramDeepLink>(`${MSG}/link_telegram`, {}),
    unlinkTelegram: () => client.post<TelegramLinkState>(`${MSG}/unlink_telegram`, {}),
    setTelegramNotifications: (enabled: boolean) =>
      client.post<TelegramLinkState>(`${MSG}/set_telegram_notifications`, { enabled }),
  }
}
