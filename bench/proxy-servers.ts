/**
 * The gateway proxy benchmark's helper servers, each run by bench/proxy.ts in its own process so its
 * CPU time can be read from /proc:
 *   node bench/proxy-servers.ts upstream        a trivial module: every request gets a fixed small body
 *   node bench/proxy-servers.ts auth <name>     an oauth2-proxy-style auth service for nginx auth_request
 * Each listens on an ephemeral loopback port, prints `{"port":…}` on one line and runs until SIGTERM.
 * The auth service learns the one valid session token on its standard input (a JSON array of tokens).
 */
import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { text } from 'node:stream/consumers'

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
 * Validates the session cookie against an in-memory map of token hashes (what oauth2-proxy-style
 * services do with their session store), answering 202 with the user in a header, or 401.
 */
function createAuthHandler(cookieName: string, tokens: string[]) {
  const sessions = new Map(tokens.map((token, index) => [hashToken(token), { user: String(index + 1) }]))
  return function answerAuth(request: IncomingMessage, response: ServerResponse) {
    const token = readCookie(request.headers.cookie, cookieName)
    const session = token === undefined ? undefined : sessions.get(hashToken(token))
    if (!session) {
      response.writeHead(401, { 'content-length': 0 })
      response.end()
      return
    }
    response.writeHead(202, { 'x-auth-user': session.user, 'content-length': 0 })
    response.end()
  }
}

async function main() {
  const [role, cookieName = ''] = process.argv.slice(2)
  let handler: (request: IncomingMessage, response: ServerResponse) => void
  if (role === 'upstream') handler = answerUpstream
  else if (role === 'auth' && cookieName) handler = createAuthHandler(cookieName, JSON.parse(await text(process.stdin)))
  else throw new Error('usage: node bench/proxy-servers.ts upstream | auth <cookie name>')
  // nginx and the gateway keep idle upstream connections for up to a minute between rounds.
  const server = createServer({ keepAliveTimeout: 120_000 }, handler)
  server.listen(0, '127.0.0.1', () => {
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
