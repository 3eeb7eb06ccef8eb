import {
  createDecipheriv,
  createECDH,
  createPublicKey,
  type ECDH,
  hkdfSync,
  randomBytes,
  randomUUID,
  verify,
} from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { json } from '@atrium/platform/testing'
import webPush from 'web-push'

/** A push the push service accepted: its verified VAPID claims, headers and decrypted payload. */
export interface ReceivedPush {
  /** The endpoint's path, e.g. `/push/<id>`. */
  path: string
  claims: { aud: string; exp: number; sub: string }
  ttl: string
  urgency: string
  // biome-ignore lint/suspicious/noExplicitAny: the decrypted JSON is whatever the gateway sent
  message: any
}

/** A browser's subscription as `PushSubscription.toJSON()` gives it. */
export interface BrowserSubscription {
  endpoint: string
  expirationTime: null
  keys: { p256dh: string; auth: string }
}

/** Gateway WebPush settings with a fresh VAPID key pair, for a push service on loopback. */
export function webPushSettings(overrides: object = {}) {
  const { publicKey, privateKey } = webPush.generateVAPIDKeys()
  return {
    Enabled: true,
    PublicKey: publicKey,
    PrivateKey: privateKey,
    Subject: 'mailto:ops@atrium.test',
    AllowPrivateEndpoints: true,
    RetryMs: 20,
    ...overrides,
  }
}

function base64urlJson(part: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
}

/**
 * Checks the RFC 8292 VAPID credentials of a push: `vapid t=<JWT>, k=<public key>`, the key the
 * gateway is configured with, an ES256 signature by it, `aud` the push service's origin, `exp`
 * in the future and at most 24 hours away, `sub` the configured subject. Returns the claims.
 */
function verifyVapid(header: string | undefined, origin: string, publicKey: string, subject: string) {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '')
  if (!match) throw new Error(`no VAPID authorization: ${header}`)
  const [, token, key] = match as unknown as [string, string, string]
  if (key !== publicKey) throw new Error('k is not the configured VAPID public key')
  const [head, body, signature] = token.split('.') as [string, string, string]
  if (base64urlJson(head).alg !== 'ES256') throw new Error('the JWT is not ES256')
  const raw = Buffer.from(publicKey, 'base64url')
  const jwk = {
    kty: 'EC',
    crv: 'P-256',
    x: raw.subarray(1, 33).toString('base64url'),
    y: raw.subarray(33).toString('base64url'),
  }
  const signed = verify(
    'sha256',
    Buffer.from(`${head}.${body}`),
    { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  )
  if (!signed) throw new Error('the JWT signature does not verify with the VAPID public key')
  const claims = base64urlJson(body) as ReceivedPush['claims']
  if (claims.aud !== origin) throw new Error(`aud ${claims.aud} is not ${origin}`)
  const now = Date.now() / 1000
  if (!(claims.exp > now && claims.exp <= now + 24 * 3600)) throw new Error(`exp ${claims.exp} is out of range`)
  if (claims.sub !== subject) throw new Error(`sub ${claims.sub} is not ${subject}`)
  return claims
}

/**
 * Decrypts an RFC 8291 `aes128gcm` push body with the browser's key pair and auth secret: the
 * RFC 8188 header (salt, record size, the sender's public key as key id), the ECDH secret, HKDF
 * to the content key and nonce, one AES-128-GCM record, then the padding delimiter removed.
 */
function decryptPush(body: Buffer, browser: ECDH, auth: Buffer): string {
  const salt = body.subarray(0, 16)
  const recordSize = body.readUInt32BE(16)
  const idLength = body[20]!
  const senderKey = body.subarray(21, 21 + idLength)
  const record = body.subarray(21 + idLength)
  if (idLength !== 65 || record.length > recordSize) throw new Error('not a single-record aes128gcm body')
  const secret = browser.computeSecret(senderKey)
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), browser.getPublicKey(), senderKey])
  const ikm = Buffer.from(hkdfSync('sha256', secret, auth, keyInfo, 32))
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16))
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12))
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce)
  decipher.setAuthTag(record.subarray(record.length - 16))
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()])
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  if (padded[end] !== 2) throw new Error('the last record has no padding delimiter 0x02')
  return padded.subarray(0, end).toString('utf8')
}

/**
 * A Web Push service on a loopback port, speaking RFC 8030: `POST /push/<id>` verifies VAPID,
 * decrypts the payload with the keys of the browser it made (`subscribe()`) and answers 201;
 * `/gone/<id>` answers 410 (the browser unsubscribed) and `/flaky/<id>` 503, each after the same
 * checks. A push that fails a check is answered 400 and listed in `refused`.
 */
export async function startPushService(t: TestContext, vapid: { PublicKey: string; Subject: string }) {
  const received: ReceivedPush[] = []
  const refused: { path: string; reason: string }[] = []
  const requests: string[] = []
  const browsers = new Map<string, { ecdh: ECDH; auth: Buffer }>()
  let origin = ''

  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const path = request.url ?? ''
      requests.push(path)
      const [, kind, id] = path.split('/') as [string, string, string]
      const browser = browsers.get(id)
      try {
        if (request.method !== 'POST' || !browser) throw new Error(`no subscription at ${request.method} ${path}`)
        if (request.headers['content-encoding'] !== 'aes128gcm') throw new Error('the body is not aes128gcm')
        const claims = verifyVapid(request.headers.authorization, origin, vapid.PublicKey, vapid.Subject)
        const text = decryptPush(Buffer.concat(chunks), browser.ecdh, browser.auth)
        const status = kind === 'gone' ? 410 : kind === 'flaky' ? 503 : 201
        if (status === 201) {
          received.push({
            path,
            claims,
            ttl: String(request.headers.ttl),
            urgency: String(request.headers.urgency),
            message: JSON.parse(text),
          })
        }
        response.writeHead(status, status === 201 ? { location: `${origin}/message/${randomUUID()}` } : {}).end()
      } catch (error) {
        refused.push({ path, reason: (error as Error).message })
        response.writeHead(400, { 'content-type': 'text/plain' }).end((error as Error).message)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.after(() => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })

  return {
    origin,
    received,
    refused,
    /** Paths of every request, accepted or not. */
    requests,

    /** A new browser subscribed at this service; `kind` chooses how its endpoint answers. */
    subscribe(kind: 'push' | 'gone' | 'flaky' = 'push'): BrowserSubscription {
      const ecdh = createECDH('prime256v1')
      ecdh.generateKeys()
      const auth = randomBytes(16)
      const id = randomUUID()
      browsers.set(id, { ecdh, auth })
      return {
        endpoint: `${origin}/${kind}/${id}`,
        expirationTime: null,
        keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
      }
    },

    /** The pushes received at one endpoint. */
    receivedAt(endpoint: string): ReceivedPush[] {
      const path = new URL(endpoint).pathname
      return received.filter((push) => push.path === path)
    },

    /** Requests made to one endpoint, accepted or not. */
    requestsTo(endpoint: string): number {
      const path = new URL(endpoint).pathname
      return requests.filter((request) => request === path).length
    },
  }
}

export type PushService = Awaited<ReturnType<typeof startPushService>>

/** A user's calls to /auth/v1/notifications/ with a session cookie and its CSRF token. */
export function notificationsClient(base: string, cookie: string, csrf: string) {
  async function call(method: string, operation: string, body?: object, headers: Record<string, string> = {}) {
    const response = await fetch(`${base}/auth/v1/notifications/${operation}`, {
      method,
      headers: {
        cookie,
        'x-csrf-token': csrf,
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body && JSON.stringify(body),
    })
    return { status: response.status, body: await json(response) }
  }
  return {
    call,
    publicKey: () => call('GET', 'public_key'),
    subscribe: (subscription: object) => call('POST', 'subscribe', subscription),
    unsubscribe: (endpoint: string) => call('POST', 'unsubscribe', { endpoint }),
    test: () => call('POST', 'test', {}),
  }
}
