import type { FastifyBaseLogger } from 'fastify'
import { createTransport } from 'nodemailer'
import type { ChatConfig } from '../config.ts'
import { isLoopbackHost } from './loopback.ts'
import { createApiMailer } from './mail-api.ts'
import { maskEmail } from './masking.ts'
import type { Outbox } from './outbox.ts'

/** One outgoing email; the From address comes from the settings unless the message names one. */
export interface MailMessage {
  to: string[]
  subject: string
  text: string
  html?: string
  /** The one-time code (and magic link) the message carries: named in the outbox's readable copy. */
  otp?: { code: string; link?: string | undefined }
  /** Threading and sender fields of a reply by the inbound email bridge (mail/mail-replies.ts). */
  from?: { name: string; address: string }
  replyTo?: string
  messageId?: string
  inReplyTo?: string
  references?: string
  headers?: Record<string, string>
}

/**
 * Sends mail over SMTP, through an email API (Postmark, SendGrid) or into the local outbox; every
 * transport takes the same message, so each template reaches people the same way.
 */
export interface Mailer {
  /** The transport in use. */
  transport: 'smtp' | 'postmark' | 'sendgrid' | 'outbox'
  /** Sends the message; rejects when the transport refuses it or does not answer in time. */
  send(message: MailMessage): Promise<{ messageId: string }>
  /** Where mail goes, for logs: never includes credentials. */
  describe(): string
}

/** What createMailer needs: the transport and its settings, the outbox directory and a logger. */
export interface MailerOptions {
  transport: ChatConfig['MailTransport']
  smtp: ChatConfig['SmtpSettings']
  api: ChatConfig['MailApi']
  outbox: Outbox
  log: FastifyBaseLogger
}

// Each SMTP phase gives up after this long, so a dead server answers DeliveryFailed instead of hanging the caller.
const TIMEOUT_MS = 10_000

/**
 * Creates the mailer MailTransport names; without one, SMTP when SmtpSettings.Host is set,
 * otherwise the local outbox.
 */
export function createMailer({ transport, smtp, api, outbox, log }: MailerOptions): Mailer {
  if (transport === 'postmark' || transport === 'sendgrid')
    return createApiMailer({ provider: transport, api, from: smtp.From, log })
  return smtp.Host ? createSmtpMailer(smtp, log) : createOutboxMailer(smtp.From, outbox, log)
}

function createSmtpMailer(smtp: ChatConfig['SmtpSettings'], log: FastifyBaseLogger): Mailer {
  const transport = createTransport(
    {
      host: smtp.Host,
      port: smtp.Port,
      // Port 465 is implicit TLS (RFC 8314); elsewhere STARTTLS is used whenever the server offers it.
      secure: smtp.Port === 465,
      // A relay on this machine is reached without crossing a network, and its certificate rarely
      // names 127.0.0.1, so STARTTLS there would only fail.
      ignoreTLS: isLoopbackHost(smtp.Host),
      // Credentials never cross a network in clear text: with a user name, a remote server that
      // does not offer STARTTLS is refused instead of being sent the password.
      requireTLS: Boolean(smtp.Username) && !isLoopbackHost(smtp.Host) && smtp.Port !== 465,
      auth: smtp.Username ? { user: smtp.Username, pass: smtp.Password } : undefined,
      connectionTimeout: TIMEOUT_MS,
      greetingTimeout: TIMEOUT_MS,
      socketTimeout: TIMEOUT_MS,
      dnsTimeout: TIMEOUT_MS,
      logger: false,
    },
    { from: smtp.From },
  )
  const where = `SMTP ${smtp.Host}:${smtp.Port}${smtp.Username ? ' with authentication' : ''}`

  return {
    transport: 'smtp',
    async send({ otp: _, ...message }) {
      const info = await transport.sendMail(message)
      log.info({ to: message.to.map(maskEmail), messageId: info.messageId }, 'mail sent over SMTP')
      return { messageId: info.messageId }
    },
    describe: () => where,
  }
}

function createOutboxMailer(from: string, outbox: Outbox, log: FastifyBaseLogger): Mailer {
  // RFC 5322 lines end in CRLF, so the .eml files are the bytes an SMTP server would have received.
  const transport = createTransport({ streamTransport: true, buffer: true, newline: 'windows' }, { from })

  return {
    transport: 'outbox',
    async send({ otp, ...message }) {
      const info = await transport.sendMail(message)
      const file = await outbox.write(
        { channel: 'email', to: message.to.join(', '), subject: message.subject, ...otp, text: message.text },
        info.message as Buffer,
      )
      log.info({ to: message.to.map(maskEmail), file }, 'mail written to the outbox')
      return { messageId: info.messageId }
    },
    describe: () => `local outbox ${outbox.path}`,
  }
}
