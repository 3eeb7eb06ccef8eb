import { CommunicationChannel, hasFlag } from '@atrium/platform'
import type { OtpPurpose } from './templates.ts'

/** A channel an OTP can go out on. */
export type OtpChannel = 'telegram' | 'email' | 'sms'

/** One OTP as every channel's sender receives it. */
export interface Otp {
  code: string
  purpose: OtpPurpose
  locale?: string
}

/** Sends OTPs on one channel to a destination of that channel (chat id, address, number). */
export interface OtpSender {
  send(to: string, otp: Otp): Promise<void>
}

/** The sender of each channel, or null while that channel is not configured. */
export type OtpSenders = Record<OtpChannel, OtpSender | null>

/** The destinations a SendOTP request names and the CommunicationChannel flags it allows. */
export interface OtpDestinations {
  channels: number
  telegram_chat_id?: string
  email?: string
  phone?: string
}

/** The chosen channel and destination, or why none could be chosen. */
export type OtpChoice = { channel: OtpChannel; to: string } | { channel: null; reason: string }

// Spec "The chat module": Telegram when linked, then email, then SMS, limited by the flags.
const ORDER = [
  { channel: 'telegram', name: 'Messenger', flag: CommunicationChannel.Messenger, field: 'telegram_chat_id' },
  { channel: 'email', name: 'Email', flag: CommunicationChannel.Email, field: 'email' },
  { channel: 'sms', name: 'SMS', flag: CommunicationChannel.SMS, field: 'phone' },
] as const

const senderNames: Record<OtpChannel, string> = {
  telegram: 'the Telegram bot (TelegramBot)',
  email: 'the mail transport',
  sms: 'the SMS sender (SmsSender)',
}

/**
 * Picks the first channel in the spec's order that the flags allow, the request has a destination
 * for, and `available` says is configured; otherwise explains what each allowed channel lacked.
 */
export function chooseOtpChannel(request: OtpDestinations, available: Record<OtpChannel, boolean>): OtpChoice {
  const lacks: string[] = []
  for (const { channel, name, flag, field } of ORDER) {
    if (!hasFlag(request.channels, flag)) continue
    const to = request[field]
    const missing = [
      ...(to ? [] : [`no ${field} given`]),
      ...(available[channel] ? [] : [`${senderNames[channel]} is not configured`]),
    ]
    if (to && missing.length === 0) return { channel, to }
    lacks.push(`${name}: ${missing.join(' and ')}`)
  }
  const allowed = ORDER.filter(({ flag }) => hasFlag(request.channels, flag)).map(({ name }) => name)
  const details = lacks.length > 0 ? ` ${lacks.join('; ')}.` : ''
  return {
    channel: null,
    reason: `No allowed channel can deliver the code (allowed: ${allowed.join(', ') || 'none'}).${details}`,
  }
}
