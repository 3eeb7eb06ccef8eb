/**
 * Masked destinations for responses and logs: enough for a person to recognise their own address,
 * not enough to harvest it (a***@example.com, +49******123).
 */

/** The first character of the local part, then the domain: `alice@example.com` is `a***@example.com`. */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@')
  if (at < 1) return '***'
  return `${address[0]}***${address.slice(at)}`
}

/** The country prefix and the last three digits of an E.164 number: `+491701234123` is `+49*******123`. */
export function maskPhone(phone: string): string {
  if (phone.length < 8) return '***'
  return `${phone.slice(0, 3)}${'*'.repeat(phone.length - 6)}${phone.slice(-3)}`
}

/** The last three characters of a Telegram chat id. */
export function maskChatId(chatId: string): string {
  return `${'*'.repeat(Math.max(3, chatId.length - 3))}${chatId.slice(-3)}`
}
