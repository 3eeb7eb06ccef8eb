/** Setting names whose values are secrets: ServiceSecret, passwords, private keys, tokens. */
const SECRET_NAME = /secret|password|passwd|privatekey|private_key|token|apikey/i

export const REDACTED = '[redacted]'

/** Hides the password of a URL-shaped string (`postgres://user:pass@host/db`). */
function redactUrlPassword(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text
  try {
    const url = new URL(text)
    if (!url.password) return text
    url.password = REDACTED
    return url.href
  } catch {
    return text
  }
}

/**
 * A copy of settings with secret values replaced by `[redacted]` (empty ones stay empty, so an
 * operator sees what is unset) and passwords inside URLs hidden.
 */
export function redactConfig(value: unknown, name = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => redactConfig(item, name))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, redactConfig(child, key)]))
  }
  if (typeof value !== 'string') return value
  if (SECRET_NAME.test(name)) return value === '' ? '' : REDACTED
  return redactUrlPassword(value)
}
