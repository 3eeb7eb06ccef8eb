import { ApiError, type Service } from '@atrium/platform'
import { maskPhone } from '../masking.ts'
import type { Outbox } from '../outbox.ts'
import { sendSms, smsStatus, statusCallback } from './sms.schema.ts'
import type { SmsDelivery } from './sms-delivery.ts'
import type { SmsMessagesRepository } from './sms-messages.repository.ts'
import { CallbackRejected, type CallbackRequest, SmsRefusal, type StatusReport } from './sms-provider.ts'
import type { SmsProviderName } from './sms-settings.ts'

export interface SmsPluginOptions {
  /** Absent while SmsSender is empty. */
  sms?: SmsDelivery
  messages: SmsMessagesRepository
  /** Development without SmsSender: SendSMS writes the text here. */
  outbox?: Outbox
}

/** POST /SendSMS and GET /SmsStatus, under /private/v1 (spec "Chat internal operations"). */
export default async function smsPlugin(app: Service, { sms, messages, outbox }: SmsPluginOptions) {
  app.post('/SendSMS', { schema: sendSms }, async (request) => {
    const { to, text, crm_id } = request.body
    if (!sms) {
      if (!outbox) throw new ApiError('SmsNotConfigured', 'SMS delivery is off: set SmsSender (docs/delivery.md#sms).')
      const file = await outbox.write({ channel: 'sms', to, text })
      request.log.info({ to: maskPhone(to), file, crm_id }, 'SMS written to the outbox (development)')
      return { provider: 'outbox' as const, message_id: '', to: maskPhone(to) }
    }
    try {
      const sent = await sms.sendText(request.log, to, text, crm_id ? Number(crm_id) : 0)
      return { provider: sent.provider, message_id: sent.messageId, to: sent.to }
    } catch (error) {
      if (!(error instanceof SmsRefusal)) throw error
      if (error.kind === 'recipient')
        throw new ApiError('SmsRecipientRefused', `The SMS provider (${error.provider}) ${error.detail}`)
      throw new ApiError('DeliveryFailed', 'The SMS delivery failed; try again later.')
    }
  })

  app.get('/SmsStatus', { schema: smsStatus }, async (request) => {
    const { provider, message_id } = request.query
    const row = await messages.find(provider, message_id)
    if (!row) throw new ApiError('NotFound', 'No SMS with this provider and message id was sent from here.')
    return {
      provider: row.provider,
      message_id: row.message_id,
      to: row.to_masked,
      status: row.status,
      provider_status: row.provider_status,
      error_code: row.error_code,
      sent_at: String(row.timetick),
      updated_at: String(row.timetick_update),
    }
  })
}

export interface SmsCallbacksPluginOptions {
  sms: SmsDelivery
  messages: SmsMessagesRepository
  /** Sms.CallbackBaseUrl without a trailing slash: the origin providers were given. */
  callbackBaseUrl: string
  nextTick: () => number
  now: () => number
}

/** Printable ASCII: what providers use for message ids and error codes. */
const PRINTABLE = /^[\x20-\x7e]*$/

function isStorable({ messageId, errorCode, providerStatus }: StatusReport): boolean {
  return (
    messageId.length <= 100 &&
    errorCode.length <= 50 &&
    providerStatus.length <= 50 &&
    PRINTABLE.test(messageId) &&
    PRINTABLE.test(errorCode) &&
    PRINTABLE.test(providerStatus)
  )
}

/** Largest callback body accepted, in bytes (providers send well under 8 KB). */
const MAX_CALLBACK_BYTES = 64 * 1024

/**
 * The providers' delivery-status callbacks, `/sms/v1/status/<provider>`, reached through the
 * gateway on a route without RequireSession. Each is verified with the provider's own scheme on
 * the exact body bytes and the public URL the provider was given (Sms.CallbackBaseUrl plus the
 * path and query as received), before anything is stored; refused ones answer 403.
 */
export async function smsCallbacksPlugin(
  app: Service,
  { sms, messages, callbackBaseUrl, nextTick, now }: SmsCallbacksPluginOptions,
) {
  // The signatures cover the bytes as sent: keep the body raw, whatever its type.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_CALLBACK_BYTES }, (_request, body, done) =>
    done(null, body),
  )

  app.route({
    method: ['GET', 'POST'],
    url: '/status/:provider',
    schema: statusCallback,
    async handler(request) {
      const name = request.params.provider as SmsProviderName
      const candidates = sms.providers.filter((provider) => provider.name === name)
      if (candidates.length === 0) throw new ApiError('NotFound', `${name} is not a configured SMS provider`)
      const callback: CallbackRequest = {
        method: request.method,
        url: callbackBaseUrl + request.url,
        headers: request.headers,
        body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        contentType: String(request.headers['content-type'] ?? '').toLowerCase(),
      }
      let reports: StatusReport[] | undefined
      let reason = ''
      // The primary and the failover may be two accounts of one provider: either may have signed.
      for (const provider of candidates) {
        try {
          reports = provider.readCallback(callback, now())
          break
        } catch (error) {
          if (!(error instanceof CallbackRejected)) throw error
          reason = error.message
        }
      }
      if (!reports) {
        request.log.warn({ provider: name, reason }, 'SMS status callback refused')
        throw new ApiError('SmsCallbackRejected', `The ${name} callback is not signed by ${name}: ${reason}.`)
      }
      // Signed, but still checked before either database sees it (PostgreSQL refuses NUL in text).
      if (!reports.every(isStorable))
        throw new ApiError(
          'InvalidRequest',
          `The ${name} report has a message id or error code that is not printable text.`,
        )
      let updated = 0
      for (const report of reports) if (await messages.applyReport(name, report, nextTick())) updated++
      request.log.info(
        { provider: name, statuses: reports.map(({ messageId, status }) => `${messageId}:${status}`), updated },
        'SMS status callback',
      )
      return { updated }
    },
  })
}
