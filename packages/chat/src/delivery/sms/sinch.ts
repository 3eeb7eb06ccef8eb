import { createHmac } from 'node:crypto'
import {
  apiBase,
  CallbackRejected,
  callProvider,
  type SmsProvider,
  SmsRefusal,
  type SmsStatus,
  sameSignature,
} from './sms-provider.ts'
import type { SmsProviderSettings } from './sms-settings.ts'

const STATUSES: Record<string, SmsStatus> = {
  Queued: 'queued',
  Dispatched: 'sent',
  Delivered: 'delivered',
  Expired: 'undelivered',
  Failed: 'failed',
  Rejected: 'failed',
  Aborted: 'failed',
  Cancelled: 'failed',
  Deleted: 'failed',
}

/**
 * The token in a Sinch callback URL. Sinch's SMS callbacks carry no payload signature our gateway
 * can pass (their Basic and OAuth options use Authorization, which the gateway keeps for its own
 * credentials), so each message's callback URL names our reference and this HMAC of it: a
 * report is accepted only for the message whose URL it came to.
 */
export function sinchCallbackToken(key: string, reference: string): string {
  return createHmac('sha256', key).update(`sinch-callback:${reference}`).digest('base64url')
}

/** Sinch SMS REST API: JSON `/xms/v1/{service_plan_id}/batches` with a Bearer API token; per-recipient delivery reports. */
export function createSinch(settings: SmsProviderSettings): SmsProvider {
  const url = `${apiBase(settings, 'https://us.sms.api.sinch.com')}/xms/v1/${encodeURIComponent(settings.AccountId)}/batches`

  return {
    name: 'sinch',
    async send({ to, text, reference }, statusCallback) {
      const body: Record<string, unknown> = { from: settings.From, to: [to], body: text, client_reference: reference }
      if (statusCallback) {
        const query = new URLSearchParams({
          ref: reference,
          token: sinchCallbackToken(settings.CallbackKey, reference),
        })
        Object.assign(body, { delivery_report: 'per_recipient', callback_url: `${statusCallback}?${query}` })
      }
      const answer = await callProvider(settings, url, {
        headers: { authorization: `Bearer ${settings.AuthToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      if ((answer.status === 201 || answer.status === 200) && typeof answer.body?.id === 'string')
        return { messageId: answer.body.id, providerStatus: 'queued' }
      const code = typeof answer.body?.code === 'string' ? answer.body.code : ''
      const why = typeof answer.body?.text === 'string' ? answer.body.text : `HTTP ${answer.status}`
      // A 400 naming a recipient (e.g. syntax_invalid_parameter_format on `to`) refuses the number.
      const kind = answer.status === 400 && /recipient|\bto\b|msisdn/i.test(why) ? 'recipient' : 'account'
      throw new SmsRefusal('sinch', kind, `refused (${code || answer.status}): ${why}`, answer.status, code)
    },

    readCallback(request) {
      const query = new URL(request.url).searchParams
      const reference = query.get('ref') ?? ''
      const token = query.get('token') ?? ''
      if (!reference || !token || !sameSignature(token, sinchCallbackToken(settings.CallbackKey, reference)))
        throw new CallbackRejected('the callback URL token does not match')
      let report: Record<string, unknown>
      try {
        report = JSON.parse(request.body.toString('utf8'))
      } catch {
        throw new CallbackRejected('the body is not JSON')
      }
      if (report?.client_reference !== undefined && report.client_reference !== reference)
        throw new CallbackRejected('the report is for another message than its URL names')
      const providerStatus = typeof report?.status === 'string' ? report.status : ''
      const status = STATUSES[providerStatus]
      const messageId = typeof report?.batch_id === 'string' ? report.batch_id : ''
      if (report?.type !== 'recipient_delivery_report_sms' || !messageId || !status) return []
      return [{ messageId, status, providerStatus, errorCode: String(report.code ?? ''), reference }]
    },
  }
}
