import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { OutgoingHttpHeaders as Http1Headers } from 'node:http'
import { type ClientHttp2Session, connect, type OutgoingHttpHeaders } from 'node:http2'
import { type Agent, request as httpsRequest, type RequestOptions } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { ConnectionOptions } from 'node:tls'
import { generate } from 'selfsigned'

/** A certificate for 127.0.0.1 and localhost: its PEM (clients trust it as their CA) and the files a gateway reads. */
export interface TestCertificate {
  cert: string
  certFile: string
  keyFile: string
}

/** Makes a self-signed certificate for 127.0.0.1 and localhost, in files removed after the test. */
export async function createTestCertificate(t: TestContext): Promise<TestCertificate> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  })
  const dir = await mkdtemp(join(tmpdir(), 'atrium-tls-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  await writeFile(certFile, pems.cert)
  await writeFile(keyFile, pems.private)
  return { cert: pems.cert, certFile, keyFile }
}

/** Opens an HTTP/2 session to an HTTPS origin that trusts `ca`; destroyed after the test. */
export function h2Connect(t: TestContext, origin: string, ca: string): Promise<ClientHttp2Session> {
  const session = connect(origin, { ca })
  t.after(() => session.destroy())
  return new Promise((resolve, reject) => {
    session.once('connect', () => resolve(session))
    session.once('error', reject)
  })
}

export interface H2Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One request on an HTTP/2 session (`:method` defaults to GET), with its whole answer. */
export function h2Request(
  session: ClientHttp2Session,
  path: string,
  headers: OutgoingHttpHeaders = {},
  body?: string,
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ...headers }, { endStream: body === undefined })
    let status = 0
    let responseHeaders: H2Answer['headers'] = {}
    let text = ''
    stream.setEncoding('utf8')
    stream.on('response', (received) => {
      status = Number(received[':status'])
      responseHeaders = received
    })
    stream.on('data', (chunk: string) => {
      text += chunk
    })
    stream.on('end', () => resolve({ status, headers: responseHeaders, body: text }))
    stream.on('error', reject)
    if (body !== undefined) stream.end(body)
  })
}

/**
 * An HTTPS request over HTTP/1.1, offering only `http/1.1` in ALPN; reports the negotiated
 * protocol. Headers given as a flat list of names and values (as `rawHeaders`) go on the wire as
 * written, repeated names and letter case included; such a list must carry Host itself.
 */
export function h1Request(
  url: string,
  ca: string,
  options: { method?: string; headers?: Http1Headers | string[]; body?: string; agent?: Agent } = {},
): Promise<H2Answer & { alpn: string | false }> {
  const requestOptions: RequestOptions & ConnectionOptions = {
    ca,
    servername: 'localhost',
    ALPNProtocols: ['http/1.1'],
    method: options.method,
    headers: options.headers as Http1Headers,
    agent: options.agent,
  }
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, requestOptions, (response) => {
      const alpn = (response.socket as { alpnProtocol?: string | false }).alpnProtocol ?? false
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        body += chunk
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body, alpn }))
    })
    request.on('error', reject)
    request.end(options.body)
  })
}
