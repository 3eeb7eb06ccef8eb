import { randomBytes } from 'node:crypto'
import { ApiError, type Service } from '@atrium/platform'
import { requireUser } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import { hashLinkToken, type TelegramRepository } from './telegram.repository.ts'
import { getTelegramLink, linkTelegram, setTelegramNotifications, unlinkTelegram } from './telegram.schema.ts'
import type { TelegramBot } from './telegram-bot.ts'

export interface TelegramPluginOptions {
  links: TelegramRepository
  /** Absent while TelegramBot is empty. */
  bot: TelegramBot | undefined
  resolveCaller: CallerResolver
  linkTtlMinutes: number
  now: () => number
}

/** 24 random bytes: 32 base64url characters, inside a deep link's 64 of [A-Za-z0-9_-]. */
const TOKEN_BYTES = 24

/**
 * The signed-in person's Telegram link (/msg/v1): get_telegram_link, link_telegram (a one-time
 * `https://t.me/<bot>?start=<token>` deep link), unlink_telegram and set_telegram_notifications.
 */
export default async function telegramPlugin(
  app: Service,
  { links, bot, resolveCaller, linkTtlMinutes, now }: TelegramPluginOptions,
) {
  async function stateOf(member: number) {
    const link = await links.linkOf(member)
    return {
      available: bot !== undefined,
      linked: link !== undefined,
      telegram_name: link?.telegramName ?? '',
      notifications: link?.notify ?? false,
    }
  }

  async function person(request: Parameters<CallerResolver>[0], what: string): Promise<number> {
    const caller = await resolveCaller(request)
    requireUser(caller, what)
    return caller.member
  }

  app.get('/get_telegram_link', { schema: getTelegramLink }, async (request) =>
    stateOf(await person(request, 'link Telegram')),
  )

  app.post('/link_telegram', { schema: linkTelegram }, async (request) => {
    const member = await person(request, 'link Telegram')
    if (!bot) throw new ApiError('TelegramNotConfigured')
    const username = await bot.username()
    const token = randomBytes(TOKEN_BYTES).toString('base64url')
    const expires = now() + linkTtlMinutes * 60_000
    await links.issueToken(member, hashLinkToken(token), expires, now())
    return {
      url: `https://t.me/${username}?start=${token}`,
      bot_username: username,
      expires_at: new Date(expires).toISOString(),
    }
  })

  app.post('/unlink_telegram', { schema: unlinkTelegram }, async (request) => {
    const member = await person(request, 'link Telegram')
    if (await links.unlink(member)) request.log.info({ member }, 'Telegram account unlinked')
    return stateOf(member)
  })

  app.post('/set_telegram_notifications', { schema: setTelegramNotifications }, async (request) => {
    const member = await person(request, 'link Telegram')
    if (!(await links.setNotify(member, request.body.enabled)))
      throw new ApiError('TelegramNotLinked', 'Link Telegram first: notifications go to the linked account.')
    return stateOf(member)
  })
}
