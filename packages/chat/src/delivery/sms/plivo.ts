import { createHmac } from 'node:crypto'
import {
  apiBase,
  CallbackRejected,
  callProvider,
  formPairs,
  header,
  type SmsProvider,
  SmsRefusal,
  type SmsStatus,
  sameSignature,
} from './sms-provider.ts'
import type { SmsProviderSettings } from './sms-settings.ts'

const STATUSES: Record<string, SmsStatus> = {
  queued: 'queued',
  sent: 'sent',
  delivered: 'delivered',
  read: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
  rejected: 'failed',
}

function sortedPairs(pairs: [string, string][]): [string, string][] {
  return [...pairs].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
}

/**
 * The X-Plivo-Signature-V3 of a POST: base64 HMAC-SHA256, keyed by the auth token, of the URL
 * without its query, then `?` and the query's `name=value` pairs sorted and joined by `&` (and a
 * `.` when a body follows), then each body parameter's name and value sorted, then `.` and the
 * nonce from X-Plivo-Signature-V3-Nonce.
 */
export function plivoSignature(authToken: string, url: string, params: [string, string][], nonce: string): string {
  const parsed = new URL(url)
  let base = `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  const query = sortedPairs([...parsed.searchParams]).map(([name, value]) => `${name}=${value}`)
  if (query.length > 0 || params.length > 0) base += `?${query.join('&')}`
  if (query.length > 0 && params.length > 0) base += '.'
  base += sortedPairs(params)
    .map(([name, value]) => name + value)
    .join('')
  return createHmac('sha256', authToken).update(`${base}.${nonce}`).digest('base64')
}

/** Plivo Messages API: JSON `/v1/Account/{auth_id}/Message/` with Basic auth; callbacks signed V3. */
export function createPlivo(settings: SmsProviderSettings): SmsProvider {
  const base = apiBase(settings, 'https://api.plivo.com')
  const url = `${base}/v1/Account/${encodeURIComponent(settings.AccountId)}/Message/`
  const authorization = `Basic ${Buffer.from(`${settings.AccountId}:${settings.AuthToken}`).toString('base64')}`

  return {
    name: 'plivo',
    async send({ to, text }, statusCallback) {
      const body: Record<string, string> = { src: settings.From, dst: to, text }
      if (statusCallback) Object.assign(body, { url: statusCallback, method: 'POST' })
      const answer = await callProvider(settings, url, {
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      const uuid = answer.body?.message_uuid?.[0]
      if ((answer.status === 202 || answer.status === 200) && typeof uuid === 'string')
        return { messageId: uuid, providerStatus: 'queued' }
      const why = typeof answer.body?.error === 'string' ? answer.body.error : `HTTP ${answer.status}`
      // Plivo answers 400 with an error text for a bad destination; 401/403 concern our account.
      const kind = answer.status === 400 && /dst|destination|number/i.test(why) ? 'recipient' : 'account'
      throw new SmsRefusal('plivo', kind, `refused: ${why}`, answer.status)
    },

    readCallback(request) {
      const params = formPairs(request.body.toString('utf8'))
      const nonce = header(request, 'x-plivo-signature-v3-nonce')
      const presented = header(request, 'x-plivo-signature-v3')
      if (!nonce || !presented) throw new CallbackRejected('X-Plivo-Signature-V3 or its nonce is missing')
      const expected = plivoSignature(settings.AuthToken, request.url, params, nonce)
      // The header may carry several signatures (one per auth token during rotation), comma-separated.
      if (!presented.split(',').some((signature) => sameSignature(signature.trim(), expected)))
        throw new CallbackRejected('X-Plivo-Signature-V3 does not match')
      const fields = new Map(params)
      const messageId = fields.get('MessageUUID') ?? ''
      const providerStatus = fields.get('Status') ?? ''
      const status = STATUSES[providerStatus]
      if (!messageId || !status) return []
      return [{ messageId, status, providerStatus, errorCode: fields.get('ErrorCode') ?? '' }]
    },
  }
}
