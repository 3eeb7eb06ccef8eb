/**
 * The gateway proxy benchmark's helper servers, each run by bench/proxy.ts in its own process so its
 * CPU time can be read from /proc:
 *   node bench/proxy-servers.ts upstream        a trivial module: every request gets a fixed small body
 *   node bench/proxy-servers.ts auth <name>     an oauth2-proxy-style auth service for nginx auth_request
 *   node bench/proxy-servers.ts proxy <name> <upstream port> [<port>]
 *                                               the runtime's floor: bare node:http that checks the session
 *                                               cookie like the auth service and forwards on undici, as the
 *                                               gateway's forwarder does, with nothing else of the gateway;
 *                                               with a port, on that port with SO_REUSEPORT, so several
 *                                               processes share it as the gateway's Workers do
 *   node bench/proxy-servers.ts proxy-signed <name> <upstream port>
 *                                               the floor of the gateway's specified work: the same, plus a
 *                                               request id (echoed), the identity headers and the signed hop
 *                                               (X-Service-Auth) the gateway sends every module
 * Each listens on an ephemeral loopback port, prints `{"port":…}` on one line and runs until SIGTERM.
 * The auth service and the proxy learn the valid session tokens on standard input (a JSON array).
 */
import { createHash, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { text } from 'node:stream/consumers'
import { gzipSync } from 'node:zlib'
import { Agent, type Dispatcher } from 'undici'
import { signHop } from '../packages/platform/src/identity.ts'

/** The upstream's answer to every request. */
export const UPSTREAM_BODY = '{"ok":true,"from":"upstream"}'

/** Reads one cookie from a Cookie header, as the gateway does. */
function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

function answerUpstream(_request: IncomingMessage, response: ServerResponse) {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': UPSTREAM_BODY.length })
  response.end(UPSTREAM_BODY)
}

/**
 * The session of a request's cookie, from an in-memory map of token hashes (an oauth2-proxy-style
 * store); without one, answers 401 itself and returns undefined.
 */
function createSessionCheck(cookieName: string, tokens: string[]) {
  const sessions = new Map(tokens.map((token, index) => [hashToken(token), { user: String(index + 1) }]))
  return (request: IncomingMessage, response: ServerResponse) => {
    const token = readCookie(request.headers.cookie, cookieName)
    const session = token === undefined ? undefined : sessions.get(hashToken(token))
    if (!session) {
      response.writeHead(401, { 'content-length': 0 })
      response.end()
    }
    return session
  }
}

/** Validates the session cookie, answering 202 with the user in a header, or 401. */
function createAuthHandler(cookieName: string, tokens: string[]) {
  const sessionOf = createSessionCheck(cookieName, tokens)
  return function answerAuth(request: IncomingMessage, response: ServerResponse) {
    const session = sessionOf(request, response)
    if (!session) return
    response.writeHead(202, { 'x-auth-user': session.user, 'content-length': 0 })
    response.end()
  }
}

/** The inter-service secret the signed floor signs with (its upstream checks nothing). */
const FLOOR_SECRET = 'proxy-bench-floor-secret'.padEnd(40, '-')

/**
 * Checks the session cookie and forwards the request with the user in X-Crm on a keep-alive undici
 * pool, answering the upstream's status, content type and body (collected: the upstream's is small).
 * `signed` adds what the specification has the gateway send a module: a request id (echoed in the
 * answer), the identity headers and X-Service-Auth, signed with the platform's own `signHop`.
 */
export function createProxyHandler(cookieName: string, tokens: string[], upstreamPort: number, signed = false) {
  const sessionOf = createSessionCheck(cookieName, tokens)
  const agent = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 60_000 })
  const origin = `http://127.0.0.1:${upstreamPort}`
  return function answerProxy(request: IncomingMessage, response: ServerResponse) {
    const session = sessionOf(request, response)
    if (!session) return
    const path = request.url ?? '/'
    const headers: Record<string, string> = {
      host: request.headers.host ?? '',
      'x-crm': session.user,
      'x-forwarded-for': request.socket.remoteAddress ?? '',
    }
    const requestId = signed ? randomUUID() : ''
    if (signed) {
      headers['x-request-id'] = requestId
      headers['x-scopes'] = 'chat'
      headers['x-keytype'] = 'session'
      headers['x-service-auth'] = signHop(FLOOR_SECRET, { method: request.method ?? 'GET', url: path, headers })
    }
    let status = 0
    let type = 'application/octet-stream'
    const chunks: Buffer[] = []
    const handler: Dispatcher.DispatchHandler = {
      // Its presence is how undici tells this handler API from the older one.
      onRequestStart() {},
      onResponseStart(_controller, statusCode, upstreamHeaders) {
        status = statusCode
        const announced = upstreamHeaders['content-type']
        if (typeof announced === 'string') type = announced
      },
      onResponseData(_controller, chunk) {
        chunks.push(chunk)
      },
      onResponseEnd() {
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
        const answer = { 'content-type': type, 'content-length': body.length }
        response.writeHead(status, signed ? { ...answer, 'x-request-id': requestId } : answer)
        response.end(body)
      },
      onResponseError() {
        response.writeHead(502, { 'content-length': 0 })
        response.end()
      },
    }
    const method = request.method as Dispatcher.HttpMethod
    agent.dispatch({ origin, path, method, headers }, handler)
  }
}

/**
 * The static floor: the page gzipped once at start and answered from memory with the headers a
 * static server sends (type, encoding, length, ETag), nothing else: no routing, checks or logging.
 */
export function createStaticHandler(page: string) {
  const body = gzipSync(page, { level: 9 })
  const headers = {
    'content-type': 'text/html; charset=utf-8',
    'content-encoding': 'gzip',
    'content-length': body.length,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    vary: 'Accept-Encoding',
  }
  return function answerStatic(_request: IncomingMessage, response: ServerResponse) {
    response.writeHead(200, headers)
    response.end(body)
  }
}

async function main() {
  const [role, cookieName = '', upstreamPort = '', sharedPort = ''] = process.argv.slice(2)
  let handler: (request: IncomingMessage, response: ServerResponse) => void
  if (role === 'upstream') handler = answerUpstream
  else if (role === 'auth' && cookieName) handler = createAuthHandler(cookieName, JSON.parse(await text(process.stdin)))
  else if (role === 'static') handler = createStaticHandler(JSON.parse(await text(process.stdin)) as string)
  else if ((role === 'proxy' || role === 'proxy-signed') && cookieName && upstreamPort) {
    const tokens = JSON.parse(await text(process.stdin))
    handler = createProxyHandler(cookieName, tokens, Number(upstreamPort), role === 'proxy-signed')
  } else {
    throw new Error(
      'usage: node bench/proxy-servers.ts upstream | auth <cookie name> | proxy <cookie name> <upstream port> [<port>] | proxy-signed <cookie name> <upstream port> | static',
    )
  }
  // nginx and the gateway keep idle upstream connections for up to a minute between rounds.
  const server = createServer({ keepAliveTimeout: 120_000 }, handler)
  const port = role === 'proxy' && sharedPort ? Number(sharedPort) : 0
  server.listen({ port, host: '127.0.0.1', reusePort: port !== 0 }, () => {
    const address = server.address()
    if (!address || typeof address === 'string') throw new Error('no port')
    process.stdout.write(`${JSON.stringify({ port: address.port })}\n`)
  })
  // Ends with the benchmark even when it could not stop its children.
  const parent = process.ppid
  setInterval(() => process.ppid !== parent && process.exit(0), 1000).unref()
  process.on('SIGTERM', () => {
    server.closeAllConnections()
    server.close(() => process.exit(0))
  })
}

if (import.meta.main) await main()
