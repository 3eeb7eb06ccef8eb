import { createPublicKey, type KeyObject, verify } from 'node:crypto'
import {
  apiBase,
  CallbackRejected,
  callProvider,
  header,
  type SmsProvider,
  SmsRefusal,
  type SmsStatus,
} from './sms-provider.ts'
import type { SmsProviderSettings } from './sms-settings.ts'

// API error codes that refuse the number: invalid phone number, not +E.164, not routable.
const RECIPIENT_CODES = new Set(['10002', '10016', '40001'])

const STATUSES: Record<string, SmsStatus> = {
  queued: 'queued',
  sending: 'sent',
  sent: 'sent',
  delivery_unconfirmed: 'sent',
  delivered: 'delivered',
  delivery_failed: 'undelivered',
  sending_failed: 'failed',
}

/** How far a webhook's telnyx-timestamp may be from our clock, in seconds. */
export const TELNYX_MAX_SKEW_SECONDS = 300

/** The account's Ed25519 public key from its base64 form (the 32 raw bytes Mission Control shows). */
export function telnyxPublicKey(base64: string): KeyObject {
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(base64, 'base64').toString('base64url') },
    format: 'jwk',
  })
}

/** Telnyx Messaging: JSON `/v2/messages` with a Bearer API key; webhooks signed Ed25519. */
export function createTelnyx(settings: SmsProviderSettings): SmsProvider {
  const url = `${apiBase(settings, 'https://api.telnyx.com')}/v2/messages`
  const publicKey = settings.CallbackKey ? telnyxPublicKey(settings.CallbackKey) : undefined

  return {
    name: 'telnyx',
    async send({ to, text }, statusCallback) {
      const body: Record<string, string> = { from: settings.From, to, text }
      if (settings.AccountId) body.messaging_profile_id = settings.AccountId
      if (statusCallback) body.webhook_url = statusCallback
      const answer = await callProvider(settings, url, {
        headers: { authorization: `Bearer ${settings.AuthToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      const data = answer.body?.data
      if (answer.status === 200 && typeof data?.id === 'string')
        return { messageId: data.id, providerStatus: String(data.to?.[0]?.status ?? 'queued') }
      const error = answer.body?.errors?.[0] ?? {}
      const code = String(error.code ?? '')
      const why =
        [error.title, error.detail].filter((part) => typeof part === 'string').join(': ') || `HTTP ${answer.status}`
      const kind = RECIPIENT_CODES.has(code) ? 'recipient' : 'account'
      throw new SmsRefusal('telnyx', kind, `refused (${code || answer.status}): ${why}`, answer.status, code)
    },

    readCallback(request, now) {
      const signature = header(request, 'telnyx-signature-ed25519')
      const timestamp = header(request, 'telnyx-timestamp')
      if (!publicKey || !signature || !/^\d{1,12}$/.test(timestamp))
        throw new CallbackRejected('telnyx-signature-ed25519 or telnyx-timestamp is missing')
      if (Math.abs(now / 1000 - Number(timestamp)) > TELNYX_MAX_SKEW_SECONDS)
        throw new CallbackRejected('telnyx-timestamp is stale')
      // Signed: the timestamp, a `|`, then the body's exact bytes.
      const signed = Buffer.concat([Buffer.from(`${timestamp}|`), request.body])
      if (!verify(null, signed, publicKey, Buffer.from(signature, 'base64')))
        throw new CallbackRejected('telnyx-signature-ed25519 does not match')
      let event: { data?: { event_type?: string; payload?: Record<string, unknown> } }
      try {
        event = JSON.parse(request.body.toString('utf8'))
      } catch {
        throw new CallbackRejected('the body is not JSON')
      }
      const payload = event?.data?.payload as
        | { id?: unknown; to?: { status?: unknown }[]; errors?: { code?: unknown }[] }
        | undefined
      const providerStatus = typeof payload?.to?.[0]?.status === 'string' ? payload.to[0].status : ''
      const status = STATUSES[providerStatus]
      const messageId = typeof payload?.id === 'string' ? payload.id : ''
      if (!event.data?.event_type?.startsWith('message.') || !messageId || !status) return []
      return [{ messageId, status, providerStatus, errorCode: String(payload?.errors?.[0]?.code ?? '') }]
    },
  }
}
