/**
 * The one error model (STYLE.md §4): every failure any Atrium service answers carries an integer
 * `code` from this table. Clients branch on the code, never on the message. Ranges: 1000–1999
 * shared by every service, 2000–2999 gateway, 3000–3999 chat, 4000–4999 reference modules.
 * docs/errors.md is generated from this table (`npm run docs`) and a test keeps it current.
 */
export const errorCodes = {
  InvalidRequest: { code: 1000, status: 400, meaning: 'The request does not match the operation schema.' },
  MalformedJson: { code: 1001, status: 400, meaning: 'The request body is not valid JSON.' },
  PayloadTooLarge: { code: 1002, status: 413, meaning: 'The request body exceeds the size limit.' },
  UnsupportedMediaType: {
    code: 1003,
    status: 415,
    meaning: 'The request body has a content type the route does not accept.',
  },
  NotFound: { code: 1004, status: 404, meaning: 'No such route or resource.' },
  HeadersTooLarge: { code: 1005, status: 431, meaning: 'The request headers exceed the size limit.' },
  BadRequest: { code: 1006, status: 400, meaning: 'The HTTP request is malformed.' },
  MisdirectedHost: { code: 1007, status: 421, meaning: 'The Host is not the domain this build serves.' },
  Unauthenticated: { code: 1008, status: 401, meaning: 'The request carries no valid credentials.' },
  Forbidden: { code: 1009, status: 403, meaning: 'The caller may not perform this operation.' },
  Conflict: { code: 1010, status: 409, meaning: 'The operation conflicts with the current state.' },
  RateLimited: { code: 1011, status: 429, meaning: 'Too many requests in the current window; see Retry-After.' },
  ShuttingDown: { code: 1012, status: 503, meaning: 'The service is shutting down; retry on another instance.' },
  NotReady: {
    code: 1013,
    status: 503,
    meaning: 'A dependency of the service (its database, a module it requires) is down; `details` names it.',
  },
  Internal: { code: 1099, status: 500, meaning: 'An unexpected error; the request id is in the server log.' },
  BadGateway: { code: 2000, status: 502, meaning: 'The module behind this route failed or could not be reached.' },
  GatewayTimeout: { code: 2001, status: 504, meaning: 'The module behind this route did not answer in time.' },
  InvalidCredentials: {
    code: 2002,
    status: 401,
    meaning: 'The app id and secret, API key or code do not match; nothing tells which part was wrong.',
  },
  SessionRequired: { code: 2003, status: 401, meaning: 'This route needs a signed-in session or an API key.' },
  CsrfRejected: {
    code: 2004,
    status: 403,
    meaning: 'A cookie-authenticated state-changing request came without the session CSRF token or from another site.',
  },
  ChallengeExpired: {
    code: 2005,
    status: 401,
    meaning: 'The code or link expired, was already used, or had too many wrong attempts; request a new one.',
  },
  InvalidReturnAddress: {
    code: 2006,
    status: 400,
    meaning: 'The return address is not a path on this site.',
  },
  CorsRejected: {
    code: 2007,
    status: 403,
    meaning: 'Cross-origin call refused: the app or the route lacks the AppAuthAndCORS flag, or the origin is unknown.',
  },
  DomainNotVerified: {
    code: 2008,
    status: 409,
    meaning: 'The DNS TXT record with the domain token was not found (yet).',
  },
  OtpDeliveryFailed: {
    code: 2009,
    status: 502,
    meaning:
      'The sign-in code could not be delivered (no channel for the address, or the provider failed); try again later.',
  },
  InvalidDomain: {
    code: 2070,
    status: 400,
    meaning: 'The project domain is not a valid DNS host name (letters, digits, hyphens; at least two labels).',
  },
  PushDisabled: {
    code: 2100,
    status: 404,
    meaning: 'Web Push is not offered by this gateway (WebPush.Enabled is off).',
  },
  PushSendingDisabled: {
    code: 2101,
    status: 503,
    meaning: 'This gateway node does not send pushes (PushSending is off); the sending node does.',
  },
  NoPushSubscription: { code: 2102, status: 404, meaning: 'The caller has no push subscription to send to.' },
  InvalidPushSubscription: {
    code: 2103,
    status: 400,
    meaning:
      'The push subscription is not usable: an https endpoint on a public host, a P-256 p256dh key and a 16-byte auth secret.',
  },
  UploadNotFound: { code: 2110, status: 404, meaning: 'No such upload, or it belongs to another user.' },
  UploadGone: {
    code: 2111,
    status: 410,
    meaning: 'The upload expired before it was finished; start a new one.',
  },
  UploadOffsetMismatch: {
    code: 2112,
    status: 409,
    meaning: "Upload-Offset is not the upload's current offset; ask with HEAD and continue from there.",
  },
  TusVersionUnsupported: {
    code: 2113,
    status: 412,
    meaning: 'The Tus-Resumable version is missing or not supported; the Tus-Version header lists those that are.',
  },
  UploadTooLarge: {
    code: 2114,
    status: 413,
    meaning: "The upload exceeds the largest file size, or the chunk the largest chunk size or the upload's length.",
  },
  QuotaExceeded: {
    code: 2115,
    status: 413,
    meaning: "The user's uploads together would exceed their storage quota.",
  },
  ChecksumMismatch: {
    code: 2116,
    status: 460,
    meaning: "The chunk's CRC32 differs from its Upload-Checksum; it was not kept, send it again.",
  },
  UploadLengthRequired: {
    code: 2117,
    status: 400,
    meaning: 'A new upload needs Upload-Length; deferred lengths (Upload-Defer-Length) are not supported.',
  },
  FileTypeNotAllowed: {
    code: 2118,
    status: 415,
    meaning: 'Files of this content type may not be uploaded here.',
  },
  UploadLocked: {
    code: 2119,
    status: 423,
    meaning: 'Another request is writing to this upload; retry shortly.',
  },
  FileNotFound: {
    code: 2120,
    status: 404,
    meaning: 'No such file, or the caller may not read it (not a member, deleted, another chat).',
  },
  FileAttached: {
    code: 2121,
    status: 409,
    meaning: 'The upload is attached to a message; delete the message to remove it.',
  },
  RangeNotSatisfiable: { code: 2122, status: 416, meaning: 'The Range lies outside the file.' },
  McpToolNotAllowed: {
    code: 2200,
    status: 403,
    meaning: 'The MCP tool (or the wallet_send currency) is not granted to the caller, its app or its key.',
  },
  McpPerCallLimit: {
    code: 2201,
    status: 403,
    meaning: 'The wallet_send amount is above a per-call limit of the caller, its app or its key.',
  },
  McpPerDayLimit: {
    code: 2202,
    status: 429,
    meaning: 'The wallet_send amount would take a per-day limit (UTC day) of the caller, its app or its key over.',
  },
  McpModuleNotRouted: {
    code: 2203,
    status: 502,
    meaning: 'The module an MCP tool calls has no route in the route map of this gateway.',
  },
  McpIdempotencyConflict: {
    code: 2204,
    status: 422,
    meaning: 'The wallet_send idempotency key was already used with other arguments.',
  },
  ChatNotFound: { code: 3000, status: 404, meaning: 'No such chat, or the caller is not a member of it.' },
  MessageNotFound: { code: 3001, status: 404, meaning: 'No such message in a chat the caller belongs to.' },
  NotChatAdmin: { code: 3002, status: 403, meaning: 'Only the chat owner or an admin may do this.' },
  NotMessageOwner: { code: 3003, status: 403, meaning: 'Only the author of the message may do this.' },
  ChatArchived: { code: 3004, status: 409, meaning: 'The chat is archived and read-only until unarchived.' },
  WrongChatType: { code: 3005, status: 409, meaning: 'The operation does not apply to this type of chat.' },
  HardDeleteDisabled: { code: 3006, status: 403, meaning: 'Hard deletes are disabled by configuration.' },
  GuestNotAllowed: {
    code: 3007,
    status: 403,
    meaning: 'Guests may not do this (uploads, file browser, search, calls on group invites).',
  },
  InviteNotFound: { code: 3008, status: 404, meaning: 'No such invite code, or it was revoked.' },
  NoDeliveryChannel: {
    code: 3009,
    status: 422,
    meaning: 'No allowed delivery channel is available for the recipient.',
  },
  DeliveryFailed: { code: 3010, status: 502, meaning: 'The delivery provider refused or did not answer.' },
  MessageDeleted: { code: 3011, status: 409, meaning: 'The message is deleted.' },
  FileTokenInvalid: {
    code: 3012,
    status: 400,
    meaning: 'The file token is damaged or expired; HEAD the finished upload for a fresh one, or upload again.',
  },
  SupportUnavailable: {
    code: 3020,
    status: 503,
    meaning: 'Support chats are off: the chat module has no support team (Support.TeamCrmIds).',
  },
  MessageTooLong: {
    code: 3021,
    status: 413,
    meaning: 'The message text (or caption, or widget JSON) is longer than 16,384 characters; shorten or split it.',
  },
  UserNotFound: {
    code: 3030,
    status: 404,
    meaning: 'No such user: the chat module knows no person with this id (the gateway has not registered them).',
  },
  SmsRecipientRefused: {
    code: 3040,
    status: 422,
    meaning: 'The SMS provider refused the number: invalid, not a mobile, unreachable, or unsubscribed (replied STOP).',
  },
  SmsNotConfigured: { code: 3041, status: 503, meaning: 'SMS delivery is off: the chat module has no SmsSender.' },
  SmsCallbackRejected: {
    code: 3042,
    status: 403,
    meaning: "A delivery-status callback's signature is missing, wrong or stale; nothing was stored.",
  },
  TelegramNotConfigured: {
    code: 3060,
    status: 503,
    meaning: 'Telegram delivery is off: the chat module has no bot token (TelegramBot).',
  },
  TelegramNotLinked: { code: 3061, status: 404, meaning: 'The person has not linked a Telegram account.' },
  TelegramBlocked: {
    code: 3062,
    status: 410,
    meaning: 'The Telegram user blocked the bot or deleted the chat with it; their link was removed.',
  },
  TelegramRejected: {
    code: 3063,
    status: 422,
    meaning: 'Telegram refused the message as sent (e.g. text that does not parse in the parse mode).',
  },
  TelegramUnavailable: {
    code: 3064,
    status: 502,
    meaning: 'The Telegram Bot API did not answer, or asked us to slow down; try again later.',
  },
  TelegramWebhookRefused: {
    code: 3065,
    status: 401,
    meaning: 'The update does not carry the configured X-Telegram-Bot-Api-Secret-Token.',
  },
  MailRecipientUnknown: {
    code: 3070,
    status: 404,
    meaning: 'No invite code or user answers to this email address (the bridge refuses it at RCPT time).',
  },
  CallNotFound: {
    code: 3100,
    status: 404,
    meaning: 'No such call, or the caller is not one of its two participants.',
  },
  AlreadyInCall: {
    code: 3101,
    status: 409,
    meaning: 'The caller is in another call (ringing or connected); end it before starting or answering one.',
  },
  CallStateConflict: {
    code: 3102,
    status: 409,
    meaning: 'The call is not in a state that allows this (already answered, or ended); details.state says which.',
  },
  SignalTooLarge: {
    code: 3103,
    status: 413,
    meaning: 'The SDP or ICE candidate is longer than the chat module accepts (Calls.MaxSdpLength).',
  },
  WidgetNotFound: { code: 3120, status: 404, meaning: 'No Telegram widget of this name (built-in or custom).' },
  WidgetNameTaken: {
    code: 3121,
    status: 409,
    meaning: 'A widget of this name exists already (the built-in widgets keep their names).',
  },
  InvalidWidgetName: {
    code: 3122,
    status: 400,
    meaning: 'A widget name is 1–32 of a–z, 0–9 and `_`, starting with a letter.',
  },
  InvalidWidgetTemplate: {
    code: 3123,
    status: 400,
    meaning:
      'The title or template is empty, too long, has control characters, or a `{placeholder}` that is not a stat of the catalogue.',
  },
  InvalidWidgetRefresh: {
    code: 3124,
    status: 400,
    meaning:
      'The refresh interval is outside the bounds the module allows (Telegram.Widgets.MinRefreshSeconds..86400).',
  },
  InvalidWidgetScope: {
    code: 3125,
    status: 400,
    meaning: 'A required scope is empty (everyone linked) or 1–64 of letters, digits, `_`, `.`, `:` and `-`.',
  },
  InsufficientFunds: {
    code: 4000,
    status: 409,
    meaning: 'The wallet’s available balance (balance minus hold) does not cover the amount and fee.',
  },
  TransactionNotFound: { code: 4001, status: 404, meaning: 'No such wallet transaction.' },
  TransactionStateConflict: {
    code: 4002,
    status: 409,
    meaning: 'The transaction’s state does not allow this change (only pending transactions complete or fail).',
  },
  InvalidAmount: {
    code: 4003,
    status: 400,
    meaning: 'The amount is not positive, has more than two decimal places, or is too large.',
  },
  InvalidRecipient: { code: 4004, status: 400, meaning: 'A transfer needs another user as recipient.' },
  IdempotencyKeyReused: {
    code: 4010,
    status: 422,
    meaning: 'The Idempotency-Key was already used by this caller for a different request; use a new key.',
  },
  InvalidIdempotencyKey: {
    code: 4011,
    status: 400,
    meaning: 'The Idempotency-Key header is not 1–64 characters of letters, digits, `_`, `.`, `:` or `-`.',
  },
  UnknownPaymentFlow: { code: 4100, status: 400, meaning: 'No payment flow of this name is configured.' },
  CurrencyNotInTariff: {
    code: 4101,
    status: 400,
    meaning: 'The payment flow’s tariff does not accept this currency.',
  },
  AmountOutOfRange: {
    code: 4102,
    status: 400,
    meaning: 'The amount is below the payment flow’s minimum or above its maximum.',
  },
  WalletUnavailable: {
    code: 4103,
    status: 502,
    meaning: 'The wallet module could not record the order’s transaction; nothing was created, try again.',
  },
} as const satisfies Record<string, ErrorDefinition>

export interface ErrorDefinition {
  /** Stable integer clients branch on. */
  code: number
  /** HTTP status the envelope is answered with. */
  status: number
  /** One line for docs/errors.md. */
  meaning: string
}

export type ErrorName = keyof typeof errorCodes

/** The error a handler throws to answer with an envelope error; its message is shown to the caller. */
export class ApiError extends Error {
  readonly code: number
  readonly status: number
  readonly details: unknown

  constructor(name: ErrorName, message?: string, details?: unknown) {
    const definition: ErrorDefinition = errorCodes[name]
    super(message ?? definition.meaning)
    this.name = name
    this.code = definition.code
    this.status = definition.status
    this.details = details
  }
}

/** Renders the error table as the Markdown of docs/errors.md. */
export function renderErrorTable(): string {
  const rows = Object.entries(errorCodes as Record<string, ErrorDefinition>)
    .sort(([, a], [, b]) => a.code - b.code)
    .map(([name, { code, status, meaning }]) => `| ${code} | ${name} | ${status} | ${meaning} |`)
  return [
    '# Error codes',
    '',
    'Every Atrium service answers failures in the envelope `{"error": {"code", "message"}, "id"}`.',
    'Branch on `code`; `message` is for people and may change. Schema failures add `error.details`',
    'with one entry per problem. `id` is the request id (your `X-Request-Id` when it is valid),',
    'also sent back in the `X-Request-Id` response header and written to the server log.',
    '',
    'Ranges: 1000–1999 every service, 2000–2999 gateway, 3000–3999 chat, 4000–4999 reference modules.',
    '',
    '<!-- Generated from packages/platform/src/errors.ts by `npm run docs`; do not edit by hand. -->',
    '',
    '| code | name | HTTP status | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n')
}
