import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

/** The fields of the Telegram Login Widget's data (https://core.telegram.org/widgets/login). */
export const TELEGRAM_FIELDS = ['id', 'first_name', 'last_name', 'username', 'photo_url', 'auth_date', 'hash'] as const

export type TelegramData = Partial<Record<(typeof TELEGRAM_FIELDS)[number], string>>

/** The data-check-string: every received field but `hash`, as `key=value`, sorted, joined by newlines. */
export function dataCheckString(data: TelegramData): string {
  return Object.entries(data)
    .filter(([key, value]) => key !== 'hash' && value !== undefined)
    .map(([key, value]) => `${key}=${value}`)
    .sort()
    .join('\n')
}

/** The hash Telegram puts on the data: HMAC-SHA-256 of the data-check-string, keyed by SHA-256 of the bot token, hex. */
export function telegramHash(data: TelegramData, botToken: string): string {
  const key = createHash('sha256').update(botToken).digest()
  return createHmac('sha256', key).update(dataCheckString(data)).digest('hex')
}

/**
 * Checks widget data as Telegram documents: the hash matches and auth_date is at most
 * `maxAgeSeconds` old (and not in the future beyond a minute). Answers the reason it fails, or
 * undefined when it checks out.
 */
export function telegramDataProblem(
  data: TelegramData,
  { botToken, maxAgeSeconds, now }: { botToken: string; maxAgeSeconds: number; now: number },
): string | undefined {
  if (!data.hash || !/^[0-9a-f]{64}$/.test(data.hash) || !data.id || !/^[0-9]{1,20}$/.test(data.id)) {
    return 'invalid_data'
  }
  const expected = Buffer.from(telegramHash(data, botToken), 'hex')
  if (!timingSafeEqual(expected, Buffer.from(data.hash, 'hex'))) return 'wrong_hash'
  const authDate = Number(data.auth_date)
  if (!Number.isInteger(authDate)) return 'invalid_data'
  const age = now / 1000 - authDate
  if (age > maxAgeSeconds || age < -60) return 'expired'
  return undefined
}
