type Headers = Record<string, string | string[] | undefined>

/** Response headers never passed back from a module: hop-by-hop ones and those the gateway owns. */
const NOT_RETURNED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'trailer',
  'http2-settings',
  'x-request-id',
])

/**
 * Returns the function that filters a module's response headers: hop-by-hop headers (and those
 * named in its Connection header) go, every Access-Control-* header goes (CORS is decided by the
 * gateway alone, so a module cannot widen it), and a Set-Cookie for the gateway session cookie
 * goes (a module must not plant or clear the gateway's session).
 */
export function createResponseHeaders(cookieName: string) {
  const sessionCookie = `${cookieName}=`.toLowerCase()
  const isSessionCookie = (value: string) => value.trimStart().toLowerCase().startsWith(sessionCookie)

  return function responseHeaders(headers: Headers): Headers {
    const connection = headers.connection
    const named =
      typeof connection === 'string'
        ? new Set(
            connection
              .toLowerCase()
              .split(',')
              .map((name) => name.trim()),
          )
        : undefined
    const kept: Headers = {}
    for (const name in headers) {
      const lower = name.toLowerCase()
      if (NOT_RETURNED.has(lower) || lower.startsWith('access-control-') || named?.has(lower)) continue
      kept[lower] = headers[name]
    }
    const setCookie = kept['set-cookie']
    if (setCookie !== undefined) {
      const cookies = (Array.isArray(setCookie) ? setCookie : [setCookie]).filter((value) => !isSessionCookie(value))
      if (cookies.length > 0) kept['set-cookie'] = cookies
      else delete kept['set-cookie']
    }
    return kept
  }
}
