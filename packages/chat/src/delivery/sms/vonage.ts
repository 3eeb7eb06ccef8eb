import { createHash, createHmac } from 'node:crypto'
import {
  apiBase,
  CallbackRejected,
  type CallbackRequest,
  callProvider,
  formPairs,
  type SmsProvider,
  SmsRefusal,
  type SmsStatus,
  sameSignature,
} from './sms-provider.ts'
import type { SmsCredentials, SmsProviderSettings } from './sms-settings.ts'

// SMS API status codes that refuse the number: invalid message (unrecognised number prefix) and
// number barred. 1 (throttled), 5 (internal error) and 10 (too many binds: back off and retry)
// are the provider being unavailable; the rest concern our account or request.
const RECIPIENT_STATUSES = new Set(['6', '7'])
const UNAVAILABLE_STATUSES = new Set(['1', '5', '10'])

const STATUSES: Record<string, SmsStatus> = {
  accepted: 'sent',
  buffered: 'sent',
  delivered: 'delivered',
  expired: 'undelivered',
  failed: 'failed',
  rejected: 'failed',
}

/** How far a signed receipt's timestamp may be from our clock, in seconds. */
export const VONAGE_MAX_SKEW_SECONDS = 300

// The GSM 03.38 basic character set: texts outside it are sent as `type=unicode`.
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà'

function isGsm(text: string): boolean {
  for (const char of text) if (!GSM_BASIC.includes(char)) return false
  return true
}

/**
 * The `sig` of a signed SMS API request: parameters other than `sig`, sorted by name, written as
 * `&name=value` with `&` and `=` in values turned into `_`; then `md5hash` is the MD5 of that
 * string followed by the signature secret, and the HMAC methods are keyed by the secret (hex).
 */
export function vonageSignature(
  secret: string,
  method: SmsCredentials['SignatureMethod'],
  params: Record<string, string>,
): string {
  const text = Object.keys(params)
    .filter((name) => name !== 'sig')
    .sort()
    .map((name) => `&${name}=${params[name]!.replace(/[&=]/g, '_')}`)
    .join('')
  if (method === 'md5hash')
    return createHash('md5')
      .update(text + secret)
      .digest('hex')
  return createHmac(method, secret).update(text).digest('hex')
}

/** A receipt's parameters, from the query string and a form or JSON body. */
function receiptParams(request: CallbackRequest): Record<string, string> {
  const params: Record<string, string> = Object.fromEntries(new URL(request.url).searchParams)
  const body = request.body.toString('utf8')
  if (request.contentType.startsWith('application/json') && body !== '') {
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      throw new CallbackRejected('the body is not JSON')
    }
    if (typeof parsed !== 'object' || parsed === null) throw new CallbackRejected('the body is not a JSON object')
    for (const [name, value] of Object.entries(parsed)) params[name] = String(value)
  } else {
    for (const [name, value] of formPairs(body)) params[name] = value
  }
  return params
}

/** Vonage SMS API: `/sms/json` with api_key and api_secret; delivery receipts signed with `sig`. */
export function createVonage(settings: SmsProviderSettings): SmsProvider {
  const url = `${apiBase(settings, 'https://rest.nexmo.com')}/sms/json`

  return {
    name: 'vonage',
    async send({ to, text, reference }, statusCallback) {
      const form = new URLSearchParams({
        api_key: settings.AccountId,
        api_secret: settings.AuthToken,
        from: settings.From,
        // The SMS API takes the number without its leading +.
        to: to.replace(/^\+/, ''),
        text,
        'client-ref': reference,
      })
      if (!isGsm(text)) form.set('type', 'unicode')
      if (statusCallback) {
        form.set('callback', statusCallback)
        form.set('status-report-req', '1')
      }
      const answer = await callProvider(settings, url, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      })
      const message = answer.body?.messages?.[0]
      if (answer.status !== 200 || typeof message !== 'object' || message === null)
        throw new SmsRefusal('vonage', 'account', `answered HTTP ${answer.status} without a message`, answer.status)
      const status = String(message.status ?? '')
      if (status === '0' && typeof message['message-id'] === 'string')
        return { messageId: message['message-id'], providerStatus: 'accepted' }
      const kind = RECIPIENT_STATUSES.has(status)
        ? 'recipient'
        : UNAVAILABLE_STATUSES.has(status)
          ? 'unavailable'
          : 'account'
      const why = typeof message['error-text'] === 'string' ? message['error-text'] : 'no error text'
      throw new SmsRefusal('vonage', kind, `refused (status ${status}): ${why}`, answer.status, status)
    },

    readCallback(request, now) {
      const params = receiptParams(request)
      const sig = params.sig ?? ''
      const timestamp = Number(params.timestamp)
      if (!sig || !Number.isInteger(timestamp)) throw new CallbackRejected('the receipt is not signed (sig, timestamp)')
      if (Math.abs(now / 1000 - timestamp) > VONAGE_MAX_SKEW_SECONDS)
        throw new CallbackRejected('the receipt timestamp is stale')
      const expected = vonageSignature(settings.CallbackKey, settings.SignatureMethod, params)
      if (!sameSignature(sig.toLowerCase(), expected.toLowerCase())) throw new CallbackRejected('sig does not match')
      const messageId = params.messageId ?? ''
      const providerStatus = params.status ?? ''
      const status = STATUSES[providerStatus]
      if (!messageId || !status) return []
      return [{ messageId, status, providerStatus, errorCode: params['err-code'] ?? '' }]
    },
  }
}
