import type { FastifyBaseLogger } from 'fastify'
import { maskPhone } from '../masking.ts'
import type { OtpSender } from '../otp-channels.ts'
import { otpLine } from '../templates.ts'
import { createPlivo } from './plivo.ts'
import { createSinch } from './sinch.ts'
import type { SmsMessagesRepository } from './sms-messages.repository.ts'
import { type SmsProvider, SmsRefusal, statusCallbackUrl } from './sms-provider.ts'
import type { SmsProviderName, SmsProviderSettings } from './sms-settings.ts'
import { createTelnyx } from './telnyx.ts'
import { createTwilio } from './twilio.ts'
import { createVonage } from './vonage.ts'

const FACTORIES: Record<SmsProviderName, (settings: SmsProviderSettings) => SmsProvider> = {
  twilio: createTwilio,
  vonage: createVonage,
  plivo: createPlivo,
  sinch: createSinch,
  telnyx: createTelnyx,
}

/** A text the provider accepted. */
export interface SentText {
  provider: SmsProviderName
  messageId: string
  /** The masked number, as responses and logs show it. */
  to: string
}

export interface SmsDeliveryOptions {
  /** The primary provider first, then the failover (smsProviderSettings). */
  settings: SmsProviderSettings[]
  messages: SmsMessagesRepository
  nextTick: () => number
}

/**
 * Sends texts through the configured providers in order: the next one is tried when a provider
 * does not answer, fails, or refuses for a reason of its own; a refused number is final (another
 * provider would refuse it too, or deliver past the person's STOP). Each accepted text is
 * recorded for its delivery-status callbacks. The log names each provider and what it answered.
 */
export function createSmsDelivery({ settings, messages, nextTick }: SmsDeliveryOptions) {
  const providers = settings.map((entry) => ({
    provider: FACTORIES[entry.name](entry),
    callback: statusCallbackUrl(entry),
  }))

  async function sendText(log: FastifyBaseLogger, to: string, text: string, crmId = 0): Promise<SentText> {
    const reference = nextTick()
    const masked = maskPhone(to)
    let refusal: SmsRefusal | undefined
    for (const [index, { provider, callback }] of providers.entries()) {
      try {
        const accepted = await provider.send({ to, text, reference: String(reference) }, callback)
        await messages.record({
          timetick: reference,
          provider: provider.name,
          messageId: accepted.messageId,
          toMasked: masked,
          crmId,
        })
        log.info(
          { provider: provider.name, attempt: index + 1, message_id: accepted.messageId, to: masked },
          'SMS accepted by the provider',
        )
        return { provider: provider.name, messageId: accepted.messageId, to: masked }
      } catch (error) {
        if (!(error instanceof SmsRefusal)) throw error
        refusal = error
        log.warn(
          {
            provider: error.provider,
            attempt: index + 1,
            kind: error.kind,
            http_status: error.httpStatus,
            provider_code: error.providerCode,
            reason: error.message,
            to: masked,
          },
          'SMS not accepted by the provider',
        )
        if (error.kind === 'recipient') break
      }
    }
    throw refusal ?? new SmsRefusal(settings[0]!.name, 'account', 'no provider configured')
  }

  /** SendOTP's SMS channel: the code's line through the same providers. */
  function otpSender(log: FastifyBaseLogger): OtpSender {
    return {
      async send(to, otp) {
        await sendText(log, to, otpLine(otp.code, otp.purpose))
      },
    }
  }

  return { providers: providers.map(({ provider }) => provider), sendText, otpSender }
}

export type SmsDelivery = ReturnType<typeof createSmsDelivery>
