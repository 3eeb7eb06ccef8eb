import { timingSafeEqual } from 'node:crypto'
import type { SmsProviderName, SmsProviderSettings } from './sms-settings.ts'

/** One text to send. */
export interface SmsMessage {
  /** E.164 number. */
  to: string
  text: string
  /** Our id of this message (a timetick), sent where the provider keeps a client reference. */
  reference: string
}

/** The provider took the message. */
export interface SmsAccepted {
  messageId: string
  /** The provider's own status word at acceptance (queued, accepted, …). */
  providerStatus: string
}

/** Our status words, in the order a message goes through them; the last three are final. */
export const SMS_STATUS_RANK = { queued: 1, sent: 2, delivered: 3, undelivered: 3, failed: 3 } as const
export type SmsStatus = keyof typeof SMS_STATUS_RANK

/** One delivery status a provider reported in a callback. */
export interface StatusReport {
  messageId: string
  status: SmsStatus
  providerStatus: string
  errorCode: string
  /** Sinch: our reference the signed callback URL names; the report applies only to that message. */
  reference?: string
}

/** A callback as the provider sent it: the public URL it was sent to and the exact body bytes. */
export interface CallbackRequest {
  method: string
  /** The public URL (CallbackBaseUrl + path and query as received): what the provider signed. */
  url: string
  headers: Record<string, string | string[] | undefined>
  body: Buffer
  contentType: string
}

/**
 * Why a provider did not take a message. `recipient`: the number is refused (invalid, not mobile,
 * unsubscribed); `account`: our credentials, sender or balance; `unavailable`: no answer in time,
 * a 5xx or throttling. Only `recipient` refusals skip the failover provider: another provider
 * would refuse the number too, or deliver past the person's STOP.
 */
export type SmsRefusalKind = 'recipient' | 'account' | 'unavailable'

/** A provider's refusal, with what the log may say about it (never credentials). */
export class SmsRefusal extends Error {
  readonly provider: SmsProviderName
  readonly kind: SmsRefusalKind
  /** The provider's HTTP status (0 when it did not answer) and its own error code. */
  readonly httpStatus: number
  readonly providerCode: string
  /** What the provider said, without the provider's name. */
  readonly detail: string

  constructor(provider: SmsProviderName, kind: SmsRefusalKind, detail: string, httpStatus = 0, providerCode = '') {
    super(`${provider}: ${detail}`)
    this.detail = detail
    this.name = 'SmsRefusal'
    this.provider = provider
    this.kind = kind
    this.httpStatus = httpStatus
    this.providerCode = providerCode
  }
}

/** A callback that is not the provider's: missing, wrong or stale signature. Nothing is stored. */
export class CallbackRejected extends Error {
  constructor(reason: string) {
    super(reason)
    this.name = 'CallbackRejected'
  }
}

/** One provider's client: sending, and reading its signed delivery-status callbacks. */
export interface SmsProvider {
  readonly name: SmsProviderName
  /** Sends one text; `statusCallback` is the URL to report statuses to, when callbacks are on. */
  send(message: SmsMessage, statusCallback: string | undefined): Promise<SmsAccepted>
  /** Verifies a callback's signature and returns its reports; throws CallbackRejected. */
  readCallback(request: CallbackRequest, now: number): StatusReport[]
}

/** A provider answer: its HTTP status and parsed JSON (or undefined when the body was not JSON). */
export interface ProviderAnswer {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: each provider reads its own documented fields
  body: any
}

/**
 * Posts to a provider with the configured timeout. No answer in time, a connection failure, a
 * 5xx or a 429 become `unavailable` refusals (the failover's cue); other answers are returned.
 */
export async function callProvider(
  settings: SmsProviderSettings,
  url: string,
  init: { headers: Record<string, string>; body: string },
): Promise<ProviderAnswer> {
  let response: Response
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { accept: 'application/json', ...init.headers },
      body: init.body,
      signal: AbortSignal.timeout(settings.timeoutMs),
      redirect: 'error',
    })
  } catch (error) {
    const { name, cause } = error as { name?: string; cause?: { code?: string } }
    const why =
      name === 'TimeoutError' ? `no answer within ${settings.timeoutMs} ms` : `unreachable (${cause?.code ?? name})`
    throw new SmsRefusal(settings.name, 'unavailable', why)
  }
  const text = await response.text().catch(() => '')
  let body: unknown
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    body = undefined
  }
  if (response.status >= 500 || response.status === 429) {
    throw new SmsRefusal(settings.name, 'unavailable', `answered HTTP ${response.status}`, response.status)
  }
  return { status: response.status, body }
}

/** The provider's API origin: the configured one (tests, regions) or its public default. */
export function apiBase(settings: SmsProviderSettings, fallback: string): string {
  return (settings.ApiBaseUrl || fallback).replace(/\/+$/, '')
}

/** The status callback URL of a provider, or undefined while callbacks are off. */
export function statusCallbackUrl(settings: SmsProviderSettings): string | undefined {
  return settings.callbackBaseUrl ? `${settings.callbackBaseUrl}/sms/v1/status/${settings.name}` : undefined
}

/** Constant-time comparison of two signature strings. */
export function sameSignature(presented: string, expected: string): boolean {
  const a = Buffer.from(presented)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** One header's value ('' when absent). */
export function header(request: CallbackRequest, name: string): string {
  const value = request.headers[name]
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '')
}

/** Form or query parameters as ordered [name, value] pairs. */
export function formPairs(text: string): [string, string][] {
  return [...new URLSearchParams(text)]
}
