import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { verifyHop } from '@atrium/platform'
import { freePort } from '@atrium/platform/testing'

/** What an echo upstream saw of one request. */
export interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  /** Header names exactly as sent on the wire. */
  rawNames: string[]
  body: string
  /** Names of the trailer fields that followed a chunked body, as sent on the wire. */
  trailerNames: string[]
  /** Whether the hop signature verified, when the upstream was given the inter-service secret. */
  hopVerified?: boolean
}

function serverUrl(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function start(t: TestContext, server: Server): Promise<string> {
  t.after(() => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return serverUrl(server)
}

/**
 * A module stand-in on a real port: paths containing `/stream` pipe the request body back as the
 * response body (large bodies both ways); every other request is answered with a JSON `Received`.
 * Each request is also recorded in `received`. Given the inter-service secret, it checks the hop
 * signature as a module does and answers 401 to a request that fails it (still recorded).
 */
export async function startEchoUpstream(t: TestContext, { serviceSecret }: { serviceSecret?: string } = {}) {
  const received: Received[] = []
  const server = createServer((request, response) => {
    const rawNames = request.rawHeaders.filter((_, index) => index % 2 === 0)
    const seen: Received = {
      method: request.method!,
      url: request.url!,
      headers: request.headers,
      rawNames,
      body: '',
      trailerNames: [],
    }
    received.push(seen)
    if (serviceSecret !== undefined) {
      seen.hopVerified = verifyHop(serviceSecret, { method: seen.method, url: seen.url, headers: seen.headers })
      if (!seen.hopVerified) {
        response.writeHead(401, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ error: { code: 1008, message: 'missing or invalid inter-service credential' } }))
        return
      }
    }
    if (request.url!.includes('/stream')) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' })
      request.pipe(response)
      return
    }
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      seen.body = Buffer.concat(chunks).toString('utf8')
      seen.trailerNames = request.rawTrailers.filter((_, index) => index % 2 === 0)
      const body = JSON.stringify(seen)
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        // A module must not be able to widen CORS or touch the gateway session.
        'access-control-allow-origin': '*',
        'set-cookie': ['atrium_session=planted; Path=/', 'module_pref=1; Path=/'],
      })
      response.end(body)
    })
  })
  const url = await start(t, server)
  return { url, received }
}

/** An upstream that accepts connections and reads requests but never answers. */
export async function startSilentUpstream(t: TestContext) {
  let requests = 0
  const server = createServer(() => {
    requests++
  })
  const url = await start(t, server)
  return {
    url,
    get requests() {
      return requests
    },
  }
}

/** The URL of a port nothing listens on (a module that is down). */
export async function downUpstreamUrl(): Promise<string> {
  // Below the ephemeral range: a port the system handed out could go to another test's listen(0).
  return `http://127.0.0.1:${await freePort()}`
}
