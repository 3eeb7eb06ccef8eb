import { formatSize } from '../files/file-size.ts'
import type { FailureKind, RequestError } from './envelope.ts'

/**
 * What each failure means to the person using the client, and what they can do about it: one entry
 * per error code of the platform's table (a new code does not compile without its words), written
 * for people rather than for the schema. A function reads the facts the server sends in
 * `error.details` (attempts left, seconds to wait).
 */
export const FAILURE_WORDS: Record<FailureKind, string | ((error: RequestError) => string)> = {
  Network: 'The server could not be reached. Check your connection and try again.',
  BadResponse: 'The server gave an answer the app does not understand. Try again in a moment.',
  InvalidRequest: 'Something you entered was not accepted. Check it and try again.',
  MalformedJson: 'The app sent something the server could not read. Reload the page and try again.',
  PayloadTooLarge: 'That is too large to send. Make it shorter or smaller and try again.',
  UnsupportedMediaType: 'The app sent something the server could not read. Reload the page and try again.',
  NotFound: 'That is not here any more. Go back and try again.',
  HeadersTooLarge: 'Your browser sent too much with the request. Clear this site’s cookies and sign in again.',
  BadRequest: 'The request could not be understood. Reload the page and try again.',
  MisdirectedHost: 'This address does not serve this app. Open it from the address your team gave you.',
  Unauthenticated: 'You were signed out. Sign in again to go on.',
  Forbidden: 'You are not allowed to do that here.',
  Conflict: 'Something changed in the meantime. Reload and try again.',
  RateLimited: (error) => {
    const seconds = detail(error, 'retryAfterSeconds')
    return typeof seconds === 'number'
      ? `That was too many tries in a short time. Wait ${waitText(seconds)} and try again.`
      : 'That was too many tries in a short time. Wait a moment and try again.'
  },
  ShuttingDown: 'The server is restarting. Try again in a moment.',
  NotReady: 'The service is not ready yet. Try again in a moment.',
  Internal: (error) =>
    `Something went wrong on the server. Try again; if it keeps happening, tell your administrator${
      error.requestId ? ` (reference ${error.requestId})` : ''
    }.`,
  BadGateway: 'Part of the service is not answering right now. Try again in a moment.',
  GatewayTimeout: 'Part of the service took too long to answer. Try again in a moment.',
  InvalidCredentials: (error) => {
    const left = detail(error, 'attemptsLeft')
    if (typeof left !== 'number') return 'That did not match. Check it and try again.'
    return `That code is not right. ${left === 1 ? 'One try is' : `${left} tries are`} left.`
  },
  SessionRequired: 'You were signed out. Sign in again to go on.',
  CsrfRejected: 'Your session needs refreshing. Reload the page and try again.',
  ChallengeExpired: (error) =>
    detail(error, 'reason') === 'attempts_exhausted'
      ? 'Too many wrong codes: this one no longer works. Ask for a new code.'
      : 'This code or link has expired or was already used. Ask for a new one.',
  InvalidReturnAddress: 'The page to come back to is not on this site. Start again from the sign-in page.',
  CorsRejected: 'This site may not use the service from here. Ask your administrator to allow it.',
  DomainNotVerified: 'The domain is not verified yet. Check its DNS record and try again later.',
  InvalidDomain: 'That is not a valid domain name.',
  OtpDeliveryFailed: 'The code could not be sent to that address or number. Check it, or try again later.',
  PushDisabled: 'Notifications are not offered on this server.',
  PushSendingDisabled: 'Notifications cannot be sent right now. Try again later.',
  NoPushSubscription: 'Notifications are not turned on in this browser.',
  InvalidPushSubscription:
    'This browser’s notification settings could not be used. Turn notifications off and on again.',
  UploadNotFound: 'That upload is gone. Attach the file again.',
  UploadGone: 'The upload took too long and expired. Attach the file again.',
  UploadOffsetMismatch: 'The upload got out of step. Resume it to continue.',
  TusVersionUnsupported: 'The app and the server disagree on how to upload. Reload the page and try again.',
  UploadTooLarge: (error) => {
    const most = detail(error, 'maxBytes')
    return typeof most === 'number'
      ? `The file is too large: files here can be at most ${formatSize(most)}.`
      : 'The file is larger than this server accepts.'
  },
  QuotaExceeded: (error) => {
    const quota = detail(error, 'quotaBytes')
    const size = typeof quota === 'number' ? ` (${formatSize(quota)})` : ''
    return `This file does not fit in your file storage${size}. Delete files you no longer need, or ask your administrator for more.`
  },
  ChecksumMismatch: 'Part of the file arrived damaged. Resume the upload to send it again.',
  UploadLengthRequired: 'The app did not say how large the file is. Reload the page and attach it again.',
  FileTypeNotAllowed: (error) => {
    const type = detail(error, 'contentType')
    return typeof type === 'string'
      ? `Files of type ${type} cannot be shared here.`
      : 'Files of this type cannot be shared here.'
  },
  UploadLocked: 'The file is still being written. Try again in a moment.',
  FileNotFound: 'That file is no longer available, or you may not open it.',
  FileAttached: 'That file is part of a message. Delete the message to remove it.',
  RangeNotSatisfiable: 'That part of the file does not exist. Download the whole file again.',
  McpToolNotAllowed: 'Your assistant is not allowed to do that. Ask an administrator to allow it.',
  McpPerCallLimit: 'That amount is above what your assistant may send at once. Send less, or send it yourself.',
  McpPerDayLimit: 'Your assistant has reached today’s sending limit. Try again tomorrow, or send it yourself.',
  McpModuleNotRouted: 'That service is not available here yet. Ask an administrator to set it up.',
  McpIdempotencyConflict: 'That transfer was already made with different details. Start a new transfer.',
  ChatNotFound: 'This chat does not exist, or you are not a member of it.',
  MessageNotFound: 'That message is no longer there.',
  NotChatAdmin: 'Only the chat’s owner or an admin can do that.',
  NotMessageOwner: 'Only the person who wrote the message can do that.',
  ChatArchived: 'This chat is archived and read-only.',
  WrongChatType: 'That cannot be done in this kind of chat.',
  HardDeleteDisabled: 'Deleting for good is turned off on this server.',
  GuestNotAllowed: 'Guests cannot do that. Sign in with an account to use it.',
  InviteNotFound: 'This invite link is not valid any more. Ask for a new one.',
  NoDeliveryChannel: 'There is no way to reach that person: they have no address this server can send to.',
  DeliveryFailed: 'The message could not be delivered right now. Try again later.',
  MessageDeleted: 'That message was deleted.',
  FileTokenInvalid: 'The attached file expired before it was sent. Attach it again.',
  SupportUnavailable: 'Support chat is not set up on this site yet. Try again later.',
  MessageTooLong: 'The message is too long. Shorten it or split it into several messages.',
  TelegramNotConfigured: 'Telegram is not set up on this site.',
  TelegramNotLinked: 'Link your Telegram account first.',
  TelegramBlocked: 'Telegram says the bot was blocked, so the link was removed. Unblock the bot and link again.',
  TelegramRejected: 'Telegram did not accept that message.',
  TelegramUnavailable: 'Telegram cannot be reached right now. Try again in a minute.',
  TelegramWebhookRefused: 'Telegram could not be verified.',
  UserNotFound: 'There is nobody with that user id here. Find people by name or email instead.',
  SmsRecipientRefused: 'That number cannot receive text messages from us. Check it, or use another way to reach them.',
  SmsNotConfigured: 'Text messages are not set up on this server. Ask your administrator.',
  SmsCallbackRejected: 'The delivery report was not accepted.',
  MailRecipientUnknown: 'Nobody receives mail at that address here.',
  CallNotFound: 'That call is not here any more.',
  AlreadyInCall: 'You are already in a call. End it before starting or taking another.',
  CallStateConflict: 'The call has already been answered or has ended.',
  SignalTooLarge: 'The call could not be set up: this browser sent more than the server accepts. Try another browser.',
  WidgetNotFound: 'That widget is not here any more.',
  WidgetNameTaken: 'A widget of that name exists already. Choose another name.',
  InvalidWidgetName: 'A widget name is up to 32 lowercase letters, digits and _, starting with a letter.',
  InvalidWidgetTemplate: 'The widget’s title or template was not accepted. Check its placeholders and try again.',
  InvalidWidgetRefresh: 'The refresh interval is outside what the server allows.',
  InvalidWidgetScope: 'A scope is letters, digits, _, ., : and -, up to 64 characters.',
  InsufficientFunds: 'Your balance is not enough for this amount and its fee.',
  TransactionNotFound: 'That payment is not there.',
  TransactionStateConflict: 'That payment is already settled and cannot change.',
  InvalidAmount: 'Enter an amount above zero with at most two decimals.',
  InvalidRecipient: 'Choose someone else to send to.',
  IdempotencyKeyReused: 'This request was already made with different details. Start it again.',
  InvalidIdempotencyKey: 'The app sent a request the server could not match. Try again.',
  UnknownPaymentFlow: 'That way to pay is not offered. Choose another.',
  CurrencyNotInTariff: 'That way to pay does not take this currency. Choose another currency or way to pay.',
  AmountOutOfRange: 'That amount is too small or too large for this way to pay.',
  WalletUnavailable: 'Your wallet could not be reached, so nothing was started. Try again in a moment.',
}

/** A fact from the error envelope's `details` object (absent when the server sent none). */
function detail(error: RequestError, key: string): unknown {
  const details = error.details
  return typeof details === 'object' && details !== null && !Array.isArray(details)
    ? (details as Record<string, unknown>)[key]
    : undefined
}

/** Seconds as a person reads them: "45 seconds", "2 minutes". */
function waitText(seconds: number): string {
  if (seconds < 90) return seconds === 1 ? '1 second' : `${Math.max(1, Math.round(seconds))} seconds`
  const minutes = Math.round(seconds / 60)
  return `${minutes} minutes`
}

/** The words for one failure. */
export function wordsFor(error: RequestError): string {
  const words = FAILURE_WORDS[error.kind]
  return typeof words === 'function' ? words(error) : words
}
