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

// Twilio error codes that refuse the number itself: invalid To, unverified on a trial account,
// unsubscribed (the person replied STOP), unroutable, not SMS-capable, landline.
const RECIPIENT_CODES = new Set([21211, 21608, 21610, 21612, 21614, 21635])

const STATUSES: Record<string, SmsStatus> = {
  accepted: 'queued',
  scheduled: 'queued',
  queued: 'queued',
  sending: 'sent',
  sent: 'sent',
  delivered: 'delivered',
  read: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
  canceled: 'failed',
}

/**
 * The X-Twilio-Signature of a form-encoded request: base64 HMAC-SHA1, keyed by the auth token,
 * of the full URL followed by each POST parameter's name and value, sorted by name.
 */
export function twilioSignature(authToken: string, url: string, params: [string, string][]): string {
  const sorted = [...params].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
  const data = url + sorted.map(([name, value]) => name + value).join('')
  return createHmac('sha1', authToken).update(data).digest('base64')
}

/** Twilio Programmable Messaging: form-encoded Messages.json with Basic auth (Account SID and auth token). */
export function createTwilio(settings: SmsProviderSettings): SmsProvider {
  const base = apiBase(settings, 'https://api.twilio.com')
  const authorization = `Basic ${Buffer.from(`${settings.AccountId}:${settings.AuthToken}`).toString('base64')}`
  const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(settings.AccountId)}/Messages.json`

  return {
    name: 'twilio',
    async send({ to, text }, statusCallback) {
      const form = new URLSearchParams({ To: to, Body: text })
      // A Messaging Service SID (MG…) sends from its own pool of numbers.
      form.set(/^MG[0-9a-f]{32}$/i.test(settings.From) ? 'MessagingServiceSid' : 'From', settings.From)
      if (statusCallback) form.set('StatusCallback', statusCallback)
      const answer = await callProvider(settings, url, {
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      })
      if (answer.status === 201 || answer.status === 200) {
        const sid = answer.body?.sid
        if (typeof sid !== 'string') throw new SmsRefusal('twilio', 'unavailable', 'answered without a message sid')
        return { messageId: sid, providerStatus: String(answer.body.status ?? '') }
      }
      const code = Number(answer.body?.code ?? 0)
      const kind = RECIPIENT_CODES.has(code) ? 'recipient' : 'account'
      const message = typeof answer.body?.message === 'string' ? answer.body.message : `HTTP ${answer.status}`
      throw new SmsRefusal(
        'twilio',
        kind,
        `refused (${code || answer.status}): ${message}`,
        answer.status,
        String(code),
      )
    },

    readCallback(request) {
      const params = formPairs(request.body.toString('utf8'))
      const presented = header(request, 'x-twilio-signature')
      if (!presented || !sameSignature(presented, twilioSignature(settings.AuthToken, request.url, params)))
        throw new CallbackRejected('X-Twilio-Signature does not match')
      const fields = new Map(params)
      const messageId = fields.get('MessageSid') ?? fields.get('SmsSid') ?? ''
      const providerStatus = fields.get('MessageStatus') ?? fields.get('SmsStatus') ?? ''
      const status = STATUSES[providerStatus]
      if (!messageId || !status) return []
      return [{ messageId, status, providerStatus, errorCode: fields.get('ErrorCode') ?? '' }]
    },
  }
}
