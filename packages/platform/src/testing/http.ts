import { type Agent, request as httpRequest, type Server } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import type { TestContext } from 'node:test'
import { connect as tlsConnect } from 'node:tls'
import type { FastifyInstance } from 'fastify'
import { freePort } from './ports.ts'
import { closeAfterTest } from './teardown.ts'

/** Listens on an ephemeral loopback port, closes the app after the test, and returns its base URL. */
export async function listen(t: TestContext, app: FastifyInstance): Promise<string> {
  closeAfterTest(t, () => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address')
  return `http://127.0.0.1:${address.port}`
}

export interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/**
 * A request with headers fetch refuses to set (Host, Connection), over node:http; `agent` picks the
 * connection (a keep-alive agent of the test's own, to count requests of one connection).
 */
export function requestWithHeaders(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const { method = 'GET', headers, agent } = options
    const req = httpRequest(url, { method, headers, agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

/**
 * Writes raw bytes to a server and returns everything it answers before closing the connection.
 * An `https:` base URL connects over TLS (HTTP/1.1 by ALPN, trusting `ca`); the socket is then not
 * half-closed, since TLS servers take that as the end of the exchange, so the request must make
 * the server close (`Connection: close`, or a request it refuses).
 */
export function sendRaw(baseUrl: string, bytes: string, { ca }: { ca?: string } = {}): Promise<string> {
  const { hostname, port, protocol } = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const socket =
      protocol === 'https:'
        ? tlsConnect(
            { port: Number(port), host: hostname, ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] },
            () => socket.write(bytes),
          )
        : connect(Number(port), hostname, () => socket.end(bytes))
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      answer += chunk
    })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

/** The parsed JSON body of a response, loosely typed for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests assert on the shape at run time
export async function json(response: Response): Promise<any> {
  return response.json()
}

/**
 * Listens on a free loopback port; `stop` takes the server down (connections refused) and `start`
 * brings it back on the same port, for a peer that fails and recovers. Stopped after the test. The
 * port is drawn below the ephemeral range (freePort): one the system hands out could go to another
 * test's `listen(0)` while this server is down.
 */
export async function listenRestartable(t: TestContext, server: Server) {
  let port = await freePort()
  async function start() {
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  }
  async function stop() {
    if (!server.listening) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.after(stop)
  await start()
  return { port, start, stop }
}
