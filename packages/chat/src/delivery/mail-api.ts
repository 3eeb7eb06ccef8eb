import type { FastifyBaseLogger } from 'fastify'
import addressparser from 'nodemailer/lib/addressparser'
import type { ChatConfig } from '../config.ts'
import type { Mailer, MailMessage } from './mailer.ts'
import { maskEmail } from './masking.ts'

/** The email API providers MailTransport can name. */
export type MailApiProvider = 'postmark' | 'sendgrid'

/** What createApiMailer needs: the provider, its settings, the From address and a logger. */
export interface ApiMailerOptions {
  provider: MailApiProvider
  api: ChatConfig['MailApi']
  from: string
  log: FastifyBaseLogger
}

/**
 * A refusal or a failure of an email API, in the shape the delivery log reads (message, code,
 * responseCode): the provider's own reason and error code, never the request or the key.
 */
export class MailApiError extends Error {
  readonly code: string
  readonly responseCode: number | undefined
  constructor(message: string, code: string, responseCode?: number) {
    super(message)
    this.name = 'MailApiError'
    this.code = code
    this.responseCode = responseCode
  }
}

const DEFAULT_BASE_URLS: Record<MailApiProvider, string> = {
  postmark: 'https://api.postmarkapp.com',
  sendgrid: 'https://api.sendgrid.com',
}
const NAMES: Record<MailApiProvider, string> = { postmark: 'Postmark', sendgrid: 'SendGrid' }
// Provider answers are small JSON documents; a longer one is cut here rather than held in memory.
const MAX_ANSWER_BYTES = 64 * 1024
const MAX_REASON_CHARS = 300

interface ProviderAnswer {
  status: number
  headers: Headers
  text: string
}

interface ProviderRequest {
  path: string
  headers: Record<string, string>
  body: object
}

/** The request each provider's documented send operation wants, and how its answer reads. */
interface ProviderProtocol {
  request(message: MailMessage, from: string, key: string): ProviderRequest
  /** The message id of an accepted message; throws MailApiError for a refusal. */
  accepted(answer: ProviderAnswer): string
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The header fields a message sets beyond the providers' own fields: the threading of an email
 * reply (Message-ID, In-Reply-To, References) and its extra headers (X-Loop), as name and value.
 */
function extraHeaders(message: MailMessage): Array<[string, string]> {
  const threading: Array<[string, string | undefined]> = [
    ['Message-ID', message.messageId],
    ['In-Reply-To', message.inReplyTo],
    ['References', message.references],
  ]
  return [
    ...threading.filter((entry): entry is [string, string] => Boolean(entry[1])),
    ...Object.entries(message.headers ?? {}),
  ]
}

/** `Name <address>` with the name quoted, as Postmark's From field takes it. */
function namedAddress({ name, address }: { name: string; address: string }): string {
  return name ? `"${name.replace(/["\\]/g, '\\$&')}" <${address}>` : address
}

/**
 * Postmark's "Send a single email" (`POST /email`, X-Postmark-Server-Token). It answers 200 with
 * `{MessageID, ErrorCode: 0}`, or 401/422/5xx with `{ErrorCode, Message}` (406: inactive recipient).
 */
const postmark: ProviderProtocol = {
  request(message, from, key) {
    const headers = extraHeaders(message)
    return {
      path: '/email',
      headers: { 'x-postmark-server-token': key },
      body: {
        From: message.from ? namedAddress(message.from) : from,
        To: message.to.join(', '),
        Subject: message.subject,
        TextBody: message.text,
        ...(message.html ? { HtmlBody: message.html } : {}),
        ...(message.replyTo ? { ReplyTo: message.replyTo } : {}),
        ...(headers.length > 0 ? { Headers: headers.map(([Name, Value]) => ({ Name, Value })) } : {}),
      },
    }
  },
  accepted({ status, text }) {
    const body = parseJson(text) as { ErrorCode?: unknown; Message?: unknown; MessageID?: unknown } | undefined
    const errorCode = typeof body?.ErrorCode === 'number' ? body.ErrorCode : undefined
    if (status === 200 && errorCode === 0 && typeof body?.MessageID === 'string') return body.MessageID
    const reason = typeof body?.Message === 'string' ? body.Message : text || 'no reason given'
    throw new MailApiError(`Postmark refused the message: ${reason}`, `postmark-${errorCode ?? status}`, status)
  },
}

function sendGridAddress(address: string): { email: string; name?: string } {
  const [parsed] = addressparser(address, { flatten: true })
  if (!parsed?.address) return { email: address }
  return parsed.name ? { email: parsed.address, name: parsed.name } : { email: parsed.address }
}

/**
 * SendGrid's v3 Mail Send (`POST /v3/mail/send`, `Authorization: Bearer`). It answers 202 with an
 * empty body and the id in X-Message-Id, or 400/401/403/413/429/5xx with `{errors: [{message, field}]}`.
 * text/plain must come before text/html in `content`.
 */
const sendgrid: ProviderProtocol = {
  request(message, from, key) {
    // Each address once: SendGrid refuses a personalization that names one twice.
    const seen = new Set<string>()
    const to = message.to.filter((email) => !seen.has(email.toLowerCase()) && seen.add(email.toLowerCase()))
    const headers = extraHeaders(message)
    return {
      path: '/v3/mail/send',
      headers: { authorization: `Bearer ${key}` },
      body: {
        personalizations: [{ to: to.map((email) => ({ email })) }],
        from: message.from
          ? { email: message.from.address, ...(message.from.name ? { name: message.from.name } : {}) }
          : sendGridAddress(from),
        ...(message.replyTo ? { reply_to: sendGridAddress(message.replyTo) } : {}),
        ...(headers.length > 0 ? { headers: Object.fromEntries(headers) } : {}),
        subject: message.subject,
        content: [
          { type: 'text/plain', value: message.text },
          ...(message.html ? [{ type: 'text/html', value: message.html }] : []),
        ],
      },
    }
  },
  accepted({ status, headers, text }) {
    if (status >= 200 && status < 300) return headers.get('x-message-id') ?? ''
    const body = parseJson(text) as { errors?: { message?: unknown; field?: unknown }[] } | undefined
    const reasons = (Array.isArray(body?.errors) ? body.errors : [])
      .map(({ message, field }) => (typeof field === 'string' && field ? `${field}: ${message}` : String(message)))
      .join('; ')
    throw new MailApiError(`SendGrid refused the message: ${reasons || text || 'no reason given'}`, 'sendgrid', status)
  },
}

const PROTOCOLS: Record<MailApiProvider, ProviderProtocol> = { postmark, sendgrid }

/** Reads at most MAX_ANSWER_BYTES of an answer, then lets the rest go. */
async function readAnswer(response: Response): Promise<string> {
  const reader = response.body?.getReader()
  if (!reader) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  while (size < MAX_ANSWER_BYTES) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
  }
  await reader.cancel().catch(() => {})
  return Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8')
}

/**
 * Sends mail through Postmark's or SendGrid's HTTP API. Every request, answer included, ends
 * within MailApi.TimeoutMs; a refusal, a 5xx or a timeout rejects with a MailApiError whose message
 * is the provider's reason, with the key cut out should a provider ever echo it.
 */
export function createApiMailer({ provider, api, from, log }: ApiMailerOptions): Mailer {
  const protocol = PROTOCOLS[provider]
  const base = (api.BaseUrl || DEFAULT_BASE_URLS[provider]).replace(/\/+$/, '')
  const where = `${NAMES[provider]} API at ${new URL(base).origin}`
  const withoutKey = (text: string) => (api.Key ? text.replaceAll(api.Key, '[key]') : text).slice(0, MAX_REASON_CHARS)

  async function post(request: ProviderRequest): Promise<ProviderAnswer> {
    const signal = AbortSignal.timeout(api.TimeoutMs)
    try {
      const response = await fetch(`${base}${request.path}`, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/json', ...request.headers },
        body: JSON.stringify(request.body),
        redirect: 'error',
        signal,
      })
      return { status: response.status, headers: response.headers, text: await readAnswer(response) }
    } catch (error) {
      if (signal.aborted)
        throw new MailApiError(`${NAMES[provider]} did not answer within ${api.TimeoutMs} ms`, 'ETIMEDOUT')
      const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
      const code = typeof cause?.code === 'string' ? cause.code : 'EFETCH'
      throw new MailApiError(`${NAMES[provider]} could not be reached: ${String(cause?.message ?? error)}`, code)
    }
  }

  return {
    transport: provider,
    async send({ otp: _, ...message }) {
      const answer = await post(protocol.request(message, from, api.Key))
      let messageId: string
      try {
        messageId = protocol.accepted(answer)
      } catch (error) {
        const { message: reason, code, responseCode } = error as MailApiError
        throw new MailApiError(withoutKey(reason), code, responseCode)
      }
      log.info({ to: message.to.map(maskEmail), messageId }, `mail sent through ${NAMES[provider]}`)
      return { messageId }
    },
    describe: () => where,
  }
}
