import { ApiError, type Service } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import { MAX_BODY_BYTES, sendEmail, sendEmailOtp, sendEmailPassReset, sendOtp } from './delivery.schema.ts'
import type { DeliveryMetrics } from './delivery-metrics.ts'
import { isLoopbackHost } from './loopback.ts'
import type { Mailer, MailMessage } from './mailer.ts'
import { maskChatId, maskEmail, maskPhone } from './masking.ts'
import { chooseOtpChannel, type OtpChannel, type OtpSender, type OtpSenders } from './otp-channels.ts'
import type { Outbox } from './outbox.ts'
import { otpLine, otpMail, passwordResetMail } from './templates.ts'

export interface DeliveryPluginOptions {
  /** Sends mail on the configured transport (SMTP, an email API, or the outbox). */
  mailer: Mailer
  /** The local outbox: mail while no transport is configured and, in development, texts. */
  outbox: Outbox
  /** An unbuilt checkout: reset links may then be http://localhost. */
  development: boolean
  /** The Telegram bot's OTP sender; absent while TelegramBot is not configured. */
  telegram?: OtpSender
  /** The Telegram chat a person linked (telegram/), for SendOTP with crm_id and no telegram_chat_id. */
  telegramChatOf?: (crmId: number) => Promise<string | undefined>
  /** The SMS provider's OTP sender; absent while SmsSender is not configured. */
  sms?: OtpSender
  /** Counts failed deliveries by channel. */
  metrics?: DeliveryMetrics
}

const masks: Record<OtpChannel, (to: string) => string> = { telegram: maskChatId, email: maskEmail, sms: maskPhone }

// Only what says why a transport failed; never the settings, so no credentials reach the log.
function failureOf(error: unknown) {
  const { message, code, responseCode, command } = error as Record<string, unknown>
  return { message, code, responseCode, command }
}

function checkBodySize(field: string, value: string | undefined) {
  if (value !== undefined && Buffer.byteLength(value) > MAX_BODY_BYTES)
    throw new ApiError('InvalidRequest', `${field} is larger than ${MAX_BODY_BYTES / 1024} KB`)
}

function parseResetUrl(value: string, development: boolean): string {
  const url = URL.parse(value)
  const local = development && url?.protocol === 'http:' && isLoopbackHost(url.hostname)
  if (!url || (url.protocol !== 'https:' && !local) || url.username || url.password)
    throw new ApiError(
      'InvalidRequest',
      `reset_url must be an https: URL without credentials${development ? ' (or http://localhost…)' : ''}`,
    )
  return url.href
}

/**
 * Development's stand-in for an SMS provider: the text goes into the outbox beside the mail, so
 * phone sign-in works on a fresh checkout (issue 16, item 4; real providers are issue 18).
 */
function createOutboxSmsSender(outbox: Outbox, log: FastifyBaseLogger): OtpSender {
  return {
    async send(to, otp) {
      const file = await outbox.write({ channel: 'sms', to, code: otp.code, text: otpLine(otp.code, otp.purpose) })
      log.info({ to: maskPhone(to), file }, 'SMS written to the outbox (development)')
    },
  }
}

/**
 * The delivery operations for the gateway and core modules (/private/v1, spec "Chat internal
 * operations"): SendOTP, SendEmailOTP, SendEmail and SendEmailPassReset.
 */
export default async function deliveryPlugin(
  app: Service,
  { mailer, outbox, development, telegram, telegramChatOf, sms, metrics }: DeliveryPluginOptions,
) {
  const toOutbox = mailer.transport === 'outbox'
  app.log.info({ mail: mailer.describe() }, 'delivery: outgoing mail')
  if (toOutbox && !development)
    app.log.warn({ outbox: outbox.path }, 'no mail transport is configured: mail is only written to the local outbox')

  async function deliver<T>(log: FastifyBaseLogger, channel: OtpChannel, send: () => Promise<T>): Promise<T> {
    try {
      return await send()
    } catch (error) {
      metrics?.failed(channel)
      log.warn(
        { channel, transport: channel === 'email' ? mailer.describe() : channel, failure: failureOf(error) },
        'delivery failed',
      )
      throw new ApiError('DeliveryFailed', `The ${channel} delivery failed; try again later.`)
    }
  }

  async function mail(message: MailMessage): Promise<string> {
    return (await mailer.send(message)).messageId
  }

  const emailOtp: OtpSender = {
    async send(to, otp) {
      await mail({ to: [to], ...otpMail(otp.code, otp.purpose), otp: { code: otp.code } })
    },
  }
  // In development with mail in the outbox, texts go there too unless an SMS sender is configured.
  const outboxSms = !sms && development && toOutbox ? createOutboxSmsSender(outbox, app.log) : undefined
  if (outboxSms) app.log.info({ outbox: outbox.path }, 'delivery: SMS go to the local outbox (development)')
  const senders: OtpSenders = { telegram: telegram ?? null, email: emailOtp, sms: sms ?? outboxSms ?? null }
  const available = { telegram: senders.telegram !== null, email: senders.email !== null, sms: senders.sms !== null }

  app.post('/SendOTP', { schema: sendOtp }, async (request) => {
    const { code, purpose, locale, crm_id } = request.body
    const linked = crm_id && !request.body.telegram_chat_id ? await telegramChatOf?.(Number(crm_id)) : undefined
    const destinations = linked ? { ...request.body, telegram_chat_id: linked } : request.body
    let choice = chooseOtpChannel(destinations, available)
    if (choice.channel === 'telegram') {
      // Telegram first, but a blocked bot or an unreachable Bot API must not cost the person the code.
      const to = choice.to
      try {
        await senders.telegram?.send(to, { code, purpose, locale })
      } catch (error) {
        metrics?.failed('telegram')
        request.log.warn({ channel: 'telegram', failure: failureOf(error) }, 'delivery failed; trying the next channel')
        choice = chooseOtpChannel(destinations, { ...available, telegram: false })
        if (choice.channel === null)
          throw new ApiError('DeliveryFailed', 'The telegram delivery failed; try again later.')
      }
    }
    if (choice.channel === null) throw new ApiError('NoDeliveryChannel', choice.reason)
    const { channel, to } = choice
    if (channel !== 'telegram')
      await deliver(request.log, channel, async () => senders[channel]?.send(to, { code, purpose, locale }))
    const masked = masks[channel](to)
    request.log.info({ channel, to: masked, crm_id, purpose }, 'OTP sent')
    return { channel, to: masked }
  })

  app.post('/SendEmailOTP', { schema: sendEmailOtp }, async (request) => {
    const { email, code, purpose, link, valid_minutes } = request.body
    const content = otpMail(code, purpose, { link, validMinutes: valid_minutes })
    await deliver(request.log, 'email', () => mail({ to: [email], ...content, otp: { code, link } }))
    return { channel: 'email' as const, to: maskEmail(email) }
  })

  app.post('/SendEmail', { schema: sendEmail }, async (request) => {
    const { to, subject, text, html } = request.body
    checkBodySize('text', text)
    checkBodySize('html', html)
    const recipients = typeof to === 'string' ? [to] : to
    const messageId = await deliver(request.log, 'email', () => mail({ to: recipients, subject, text, html }))
    return { message_id: messageId }
  })

  app.post('/SendEmailPassReset', { schema: sendEmailPassReset }, async (request) => {
    const { email, crm_id } = request.body
    const resetUrl = parseResetUrl(request.body.reset_url, development)
    const messageId = await deliver(request.log, 'email', () => mail({ to: [email], ...passwordResetMail(resetUrl) }))
    request.log.info({ to: maskEmail(email), crm_id }, 'password reset email sent')
    return { to: maskEmail(email), message_id: messageId }
  })
}
