import assert from 'node:assert/strict'
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

/** The five providers, as SmsSender names them. */
export type PeerProvider = 'twilio' | 'vonage' | 'plivo' | 'sinch' | 'telnyx'

/** Credentials the peer accepts; the chat module is configured with the same. */
export interface PeerCredentials {
  accountId: string
  authToken: string
}

/** One request the peer received. */
export interface PeerRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: string
  /** The form fields (Twilio, Vonage) or JSON fields (Plivo, Sinch, Telnyx) of the message. */
  fields: Record<string, unknown>
  /** Whether the request carried the credentials the provider documents. */
  authorized: boolean
  /** The message id the peer answered with ('' when it refused). */
  messageId: string
}

/** An answer the test wants instead of the documented success: a status and JSON body, or no answer at all. */
export type PeerAnswer = { status: number; body: unknown } | 'hang'

function basic(credentials: PeerCredentials): string {
  return `Basic ${Buffer.from(`${credentials.accountId}:${credentials.authToken}`).toString('base64')}`
}

function parseFields(headers: IncomingHttpHeaders, body: string): Record<string, unknown> {
  const type = headers['content-type'] ?? ''
  if (type.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(body))
  if (type.startsWith('application/json')) return JSON.parse(body)
  return {}
}

/**
 * A local server speaking one SMS provider's documented send API: it checks the authentication
 * that provider uses (Basic, api_key/api_secret fields, Bearer), answers as the provider does
 * (201/202/200 with the provider's id field, or its documented refusal for bad credentials), and
 * keeps every request. `answerNext` replaces the next answers (a refusal, a 5xx, or none).
 */
export async function startSmsProviderPeer(t: TestContext, provider: PeerProvider, credentials: PeerCredentials) {
  const received: PeerRequest[] = []
  const planned: PeerAnswer[] = []
  const hanging = new Set<() => void>()

  function documentedAnswer(request: PeerRequest): { status: number; body: unknown } {
    const { fields, authorized } = request
    switch (provider) {
      case 'twilio': {
        if (!authorized) return { status: 401, body: { code: 20003, message: 'Authenticate', status: 401 } }
        request.messageId = `SM${randomBytes(16).toString('hex')}`
        return { status: 201, body: { sid: request.messageId, status: 'queued', to: fields.To, body: fields.Body } }
      }
      case 'vonage': {
        if (!authorized)
          return {
            status: 200,
            body: { 'message-count': '1', messages: [{ status: '4', 'error-text': 'Bad Credentials' }] },
          }
        request.messageId = randomBytes(8).toString('hex').toUpperCase()
        return {
          status: 200,
          body: { 'message-count': '1', messages: [{ to: fields.to, 'message-id': request.messageId, status: '0' }] },
        }
      }
      case 'plivo': {
        if (!authorized) return { status: 401, body: { api_id: randomUUID(), error: 'authentication failed' } }
        request.messageId = randomUUID()
        return {
          status: 202,
          body: { api_id: randomUUID(), message: 'message(s) queued', message_uuid: [request.messageId] },
        }
      }
      case 'sinch': {
        if (!authorized) return { status: 401, body: { code: 'unauthorized', text: 'Unauthorized' } }
        request.messageId = randomBytes(13).toString('hex').toUpperCase()
        return {
          status: 201,
          body: { id: request.messageId, to: fields.to, from: fields.from, body: fields.body, type: 'mt_text' },
        }
      }
      case 'telnyx': {
        if (!authorized) return { status: 401, body: { errors: [{ code: '10009', title: 'Authentication failed' }] } }
        request.messageId = randomUUID()
        return {
          status: 200,
          body: {
            data: {
              record_type: 'message',
              id: request.messageId,
              to: [{ phone_number: fields.to, status: 'queued' }],
            },
          },
        }
      }
    }
  }

  function isAuthorized(path: string, headers: IncomingHttpHeaders, fields: Record<string, unknown>): boolean {
    const { accountId, authToken } = credentials
    switch (provider) {
      case 'twilio':
        return (
          path === `/2010-04-01/Accounts/${accountId}/Messages.json` && headers.authorization === basic(credentials)
        )
      case 'vonage':
        return path === '/sms/json' && fields.api_key === accountId && fields.api_secret === authToken
      case 'plivo':
        return path === `/v1/Account/${accountId}/Message/` && headers.authorization === basic(credentials)
      case 'sinch':
        return path === `/xms/v1/${accountId}/batches` && headers.authorization === `Bearer ${authToken}`
      case 'telnyx':
        return path === '/v2/messages' && headers.authorization === `Bearer ${authToken}`
    }
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const fields = parseFields(request.headers, body)
      const entry: PeerRequest = {
        method: request.method!,
        path: request.url!,
        headers: request.headers,
        body,
        fields,
        authorized: isAuthorized(request.url!, request.headers, fields),
        messageId: '',
      }
      received.push(entry)
      const answer = planned.shift() ?? documentedAnswer(entry)
      if (answer === 'hang') {
        // Never answered: the client's timeout must end the wait; the socket closes with the peer.
        hanging.add(() => response.destroy())
        return
      }
      response.writeHead(answer.status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(answer.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const end of hanging) end()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    /** The next requests get these answers, in order, instead of the documented success. */
    answerNext(...answers: PeerAnswer[]) {
      planned.push(...answers)
    },
    /** The one request received, asserted to be the only one. */
    only(): PeerRequest {
      assert.equal(received.length, 1, `${provider} received ${received.length} requests`)
      return received[0]!
    },
  }
}

export type SmsProviderPeer = Awaited<ReturnType<typeof startSmsProviderPeer>>

function sortPairs(pairs: [string, string][]): [string, string][] {
  return [...pairs].sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
}

/**
 * Callback signatures as each provider makes them, written here from the providers' documentation
 * independently of the module's verifiers.
 */
export const providerSignatures = {
  /** X-Twilio-Signature: HMAC-SHA1(auth token, URL + sorted name+value pairs), base64. */
  twilio(authToken: string, url: string, form: URLSearchParams): string {
    const data = sortPairs([...form]).reduce((text, [name, value]) => text + name + value, url)
    return createHmac('sha1', authToken).update(data).digest('base64')
  },
  /** X-Plivo-Signature-V3 of a POST to a URL without query: HMAC-SHA256(auth token, URL?sorted name+value.nonce), base64. */
  plivo(authToken: string, url: string, form: URLSearchParams, nonce: string): string {
    const data = `${url}?${sortPairs([...form])
      .map(([name, value]) => name + value)
      .join('')}.${nonce}`
    return createHmac('sha256', authToken).update(data).digest('base64')
  },
  /** Vonage `sig`: sorted `&name=value` (values' & and = as _), then md5hash or an HMAC (hex). */
  vonage(secret: string, method: 'md5hash' | 'sha256', params: Record<string, string>): string {
    const text = Object.keys(params)
      .sort()
      .map((name) => `&${name}=${params[name]!.replaceAll('&', '_').replaceAll('=', '_')}`)
      .join('')
    return method === 'md5hash'
      ? createHash('md5')
          .update(text + secret)
          .digest('hex')
      : createHmac('sha256', secret).update(text).digest('hex').toUpperCase()
  },
}

/** Test credentials of each provider, shaped like the real ones. */
export const PEER_CREDENTIALS: Record<PeerProvider, PeerCredentials & { from: string }> = {
  twilio: { accountId: `AC${'a1'.repeat(16)}`, authToken: 'twilio-auth-token-5f1e2d3c4b5a6978', from: '+15005550006' },
  vonage: { accountId: 'a1b2c3d4', authToken: 'vonage-api-secret-77', from: 'Atrium' },
  plivo: { accountId: 'MAODUYZJI0NTAZMZKXNZ', authToken: 'plivo-auth-token-0c9b8a7f6e5d4c3b', from: '+14155550100' },
  sinch: { accountId: 'f'.repeat(32), authToken: 'sinch-api-token-3e4d5c6b7a', from: '+447700900123' },
  telnyx: { accountId: '', authToken: 'KEY0123456789ABCDEF_telnyxsecret', from: '+13125550199' },
}

/** The chat settings that send through `peer` as `provider` (the Sms section and SmsSender). */
export function smsSettingsFor(provider: PeerProvider, peer: { url: string }, extra: Record<string, unknown> = {}) {
  const { accountId, authToken, from } = PEER_CREDENTIALS[provider]
  return {
    SmsSender: provider,
    Sms: { AccountId: accountId, AuthToken: authToken, From: from, ApiBaseUrl: peer.url, ...extra },
  }
}
