import { ApiError, CommunicationChannel, signedHeaders } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { ModuleInstances } from '../proxy/module-instances.ts'

export interface OtpDeliveryOptions {
  /** The chat module's instances (Modules.chat); undefined when not configured. */
  chat: ModuleInstances | undefined
  serviceSecret: string
  /** How long the code and link stay valid, for the wording of the mail. */
  ttlMinutes: number
  timeoutMs?: number
}

/**
 * Sends sign-in codes through the chat module's delivery operations (spec: "Chat internal
 * operations"), signed with the inter-service credential. An email carries the code and the
 * magic link in one message (SendEmailOTP with its `link`); a phone code goes through SendOTP,
 * by SMS, or by the linked Telegram of the person whose number is already verified.
 * Failures answer OtpDeliveryFailed; the chat module's reason goes to the log only.
 */
export function createOtpDelivery({ chat, serviceSecret, ttlMinutes, timeoutMs = 15_000 }: OtpDeliveryOptions) {
  async function call(log: FastifyBaseLogger, operation: string, body: object): Promise<void> {
    if (!chat) {
      log.error('sign-in code not sent: Modules.chat is not configured')
      throw new ApiError('OtpDeliveryFailed')
    }
    const url = `${chat.url.replace(/\/+$/, '')}/private/v1/${operation}`
    let status = 0
    let answer = ''
    try {
      const response = await chat.fetch(url, {
        method: 'POST',
        headers: signedHeaders(serviceSecret, 'POST', url, { 'content-type': 'application/json' }),
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      })
      status = response.status
      answer = await response.text()
      if (response.ok) return
    } catch (error) {
      answer = (error as Error).message
    }
    log.warn({ operation, status, answer: answer.slice(0, 500) }, 'sign-in code delivery failed')
    throw new ApiError('OtpDeliveryFailed')
  }

  return {
    /** Mails the code and the magic link to an address. */
    async sendEmailSignIn(log: FastifyBaseLogger, email: string, code: string, link: string): Promise<void> {
      await call(log, 'SendEmailOTP', { email, code, purpose: 'sign-in', link, valid_minutes: ttlMinutes })
    },

    /**
     * Texts a code to a phone number; for `knownUser` (the CRM id whose verified number it is) the
     * chat module may send it to their linked Telegram instead (spec: Telegram first), since that
     * account was linked by the same person while signed in.
     */
    async sendPhoneCode(log: FastifyBaseLogger, phone: string, code: string, knownUser = 0): Promise<void> {
      const channels = CommunicationChannel.SMS | (knownUser ? CommunicationChannel.Messenger : 0)
      await call(log, 'SendOTP', {
        phone,
        code,
        channels,
        purpose: 'sign-in',
        ...(knownUser ? { crm_id: String(knownUser) } : {}),
      })
    },
  }
}

export type OtpDelivery = ReturnType<typeof createOtpDelivery>
