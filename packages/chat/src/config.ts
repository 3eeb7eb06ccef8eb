import { commonSettings, loadConfig, moduleEventsSettings, type Settings } from '@atrium/platform'
import { Type } from 'typebox'
import { isLoopbackHost } from './delivery/loopback.ts'
import { smsSettingsProblems } from './delivery/sms/sms-settings.ts'
import { telegramSettings, telegramSettingsProblems } from './telegram/telegram.config.ts'

const SMS_SENDERS = [
  Type.Literal(''),
  Type.Literal('twilio'),
  Type.Literal('vonage'),
  Type.Literal('plivo'),
  Type.Literal('sinch'),
  Type.Literal('telnyx'),
]

// One provider's credentials: the spec names AccountId, AuthToken and From; the rest is what the
// five providers need besides (docs/delivery.md#sms says what each field means per provider).
const smsCredentials = {
  AccountId: Type.String({
    default: '',
    description:
      'Provider account: Twilio Account SID, Vonage API key, Plivo Auth ID, Sinch service plan id; Telnyx: messaging profile id (optional).',
  }),
  AuthToken: Type.String({
    default: '',
    description:
      'Provider secret: Twilio auth token, Vonage API secret, Plivo auth token, Sinch API token, Telnyx API key.',
  }),
  From: Type.String({ default: '', description: 'Sender number (E.164) or alphanumeric sender id.' }),
  ApiBaseUrl: Type.String({
    default: '',
    description:
      "Provider API origin; empty: the provider's public API (Sinch: `https://us.sms.api.sinch.com`; set `https://eu.sms.api.sinch.com` for the EU).",
  }),
  CallbackKey: Type.String({
    default: '',
    description:
      'Checks delivery-status callbacks: Vonage signature secret, Telnyx public key (base64), Sinch a secret of ours (32+ characters) that signs callback URLs; Twilio and Plivo sign with AuthToken.',
  }),
  SignatureMethod: Type.Union(
    [
      Type.Literal('md5hash'),
      Type.Literal('md5'),
      Type.Literal('sha1'),
      Type.Literal('sha256'),
      Type.Literal('sha512'),
    ],
    {
      default: 'md5hash',
      description: "Vonage only: the signature method chosen in Vonage's dashboard for signed delivery receipts.",
    },
  ),
}

/** Every chat module setting; docs/configuration.md is generated from this declaration. */
export const chatSettings = Type.Object(
  {
    ...commonSettings({ host: '127.0.0.1', port: 8081 }),
    ChatDB: Type.String({
      default: 'sqlite:data/chat.db',
      description: 'Chat database (ChatDB): `sqlite:<path>` (embedded default) or `postgres://…`.',
    }),
    IdempotencyKeyHours: Type.Integer({
      default: 24,
      minimum: 24,
      maximum: 8760,
      description:
        'How long an `Idempotency-Key` of send_message is honoured, in hours (at least 24); older keys are forgotten lazily.',
    }),
    HardDelete: Type.Object(
      {
        Messages: Type.Boolean({
          default: false,
          description: 'Enable hard_delete_message (rows are removed for good).',
        }),
        Chats: Type.Boolean({ default: false, description: 'Enable hard_delete_chat for group chats.' }),
      },
      { default: {}, additionalProperties: false },
    ),
    Events: Type.Object(
      {
        ...moduleEventsSettings,
        RetentionHours: Type.Integer({
          default: 168,
          minimum: 25,
          maximum: 87_600,
          description:
            "Events older than this many hours are deleted. Keep it above the gateway's Events.ReplayMaxAgeSeconds (a day) and above the longest webhook outage whose events must still be delivered.",
        }),
        RetentionSweepSeconds: Type.Integer({
          default: 300,
          minimum: 1,
          maximum: 86_400,
          description: 'How often each chat instance deletes the events past Events.RetentionHours.',
        }),
        WakeWindowMs: Type.Integer({
          default: 20,
          minimum: 0,
          maximum: 1000,
          description:
            'Waiting long-polls of /private/v1/events: new events are checked against their subjects at the first commit after a quiet window, and commits within this many ms after it are coalesced into one check at its end (bounds the checks under load); 0: every commit is checked.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    SmtpSettings: Type.Object(
      {
        Host: Type.String({
          default: '',
          description: 'SMTP server for outgoing mail; empty: mail goes to the local outbox.',
        }),
        Port: Type.Integer({ default: 587, minimum: 1, maximum: 65535, description: 'SMTP server port.' }),
        Username: Type.String({ default: '', description: 'SMTP user name; empty: no authentication.' }),
        Password: Type.String({ default: '', description: 'SMTP password.' }),
        From: Type.String({
          default: 'Atrium <no-reply@localhost>',
          description: 'From: address of outgoing mail, on every MailTransport.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    MailTransport: Type.Union(
      [Type.Literal(''), Type.Literal('smtp'), Type.Literal('postmark'), Type.Literal('sendgrid')],
      {
        default: '',
        description:
          'How mail leaves: `smtp` (SmtpSettings), `postmark` or `sendgrid` (their HTTP APIs, MailApi); empty: SMTP when SmtpSettings.Host is set, otherwise the local outbox.',
      },
    ),
    MailApi: Type.Object(
      {
        Key: Type.String({
          default: '',
          // It goes into an HTTP header: a control character there would make the request fail
          // with an error that quotes the header, key included.
          pattern: '^[\\x21-\\x7e]*$',
          description:
            'The email API credential: the Postmark server token or the SendGrid API key. Required with MailTransport postmark or sendgrid.',
        }),
        BaseUrl: Type.String({
          default: '',
          description:
            'Base URL of the email API; empty: the provider’s own (https://api.postmarkapp.com, https://api.sendgrid.com). Must be https:, or http: on this machine (tests).',
        }),
        TimeoutMs: Type.Integer({
          default: 10_000,
          minimum: 100,
          maximum: 60_000,
          description: 'How long one email API request may take, answer included, before it counts as failed.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    Outbox: Type.Object(
      {
        Path: Type.String({
          default: 'data/outbox',
          minLength: 1,
          description:
            'Directory of the local outbox used while SmtpSettings.Host is empty: each message is an .eml file and a readable .txt there for the operator (in development SMS too).',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    SmsSender: Type.Union(SMS_SENDERS, {
      default: '',
      description:
        'Selected SMS provider: `twilio`, `vonage`, `plivo`, `sinch` or `telnyx` (docs/delivery.md#sms); empty: SMS delivery is off (in development texts go to the outbox).',
    }),
    Sms: Type.Object(
      {
        ...smsCredentials,
        CallbackBaseUrl: Type.String({
          default: '',
          description:
            'Public origin of the gateway (e.g. `https://example.com`) whose route map sends `/sms/` to this module: providers post delivery statuses to `<CallbackBaseUrl>/sms/v1/status/<provider>`, and signatures are checked against that URL. Empty: no status callbacks are requested.',
        }),
        TimeoutMs: Type.Integer({
          default: 10000,
          minimum: 100,
          maximum: 60000,
          description: 'How long one provider may take to accept a message before it counts as not answering.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    SmsFailover: Type.Object(
      {
        Sender: Type.Union(SMS_SENDERS, {
          default: '',
          description:
            'Second SMS provider, tried when the first does not answer, answers 5xx or 429, or refuses for a reason of its own (not for a refused number); empty: no failover.',
        }),
        ...smsCredentials,
      },
      { default: {}, additionalProperties: false },
    ),
    TelegramBot: Type.String({
      default: '',
      description:
        'Telegram bot token from @BotFather; empty: Telegram delivery is off (docs/delivery.md, "Telegram").',
    }),
    Telegram: telegramSettings,
    Calls: Type.Object(
      {
        RingSeconds: Type.Integer({
          default: 45,
          minimum: 5,
          maximum: 600,
          description: 'A call nobody answers within this many seconds ends as missed.',
        }),
        StaleSeconds: Type.Integer({
          default: 40,
          minimum: 5,
          maximum: 3600,
          description:
            'A call whose participant sent no sign of life (an operation or a keepalive signal) for this many seconds is ended as failed by the server heartbeat; clients send a keepalive every third of it.',
        }),
        SweepMs: Type.Integer({
          default: 5000,
          minimum: 10,
          maximum: 60_000,
          description: 'How often the server heartbeat looks for calls to end (unanswered or silent).',
        }),
        MaxSdpLength: Type.Integer({
          default: 32_768,
          minimum: 1024,
          maximum: 262_144,
          description: 'Longest SDP offer or answer accepted in characters; an ICE candidate may be at most 2,048.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    Support: Type.Object(
      {
        TeamCrmIds: Type.Array(Type.String({ pattern: '^[1-9][0-9]{0,15}$' }), {
          default: [],
          uniqueItems: true,
          description:
            'CRM ids (decimal strings) of the support team: open_support_chat makes them members of every support chat (the authority; the client config.json support.teamCrmIds mirrors it for display). Empty: support chats are unavailable.',
        }),
        WelcomeMessage: Type.String({
          default: '',
          maxLength: 4000,
          description:
            'First message of a new support chat, posted as the first team member (the authority; the client config.json support.welcomeMessage mirrors it). Empty: none.',
        }),
        EscalateAfterSeconds: Type.Integer({
          default: 900,
          minimum: 1,
          description:
            'A support chat whose customer has waited this long for a team answer is listed as an escalation (GET /private/v1/support/escalations, get_support_escalations).',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)

export type ChatConfig = Settings<typeof chatSettings>

/** Loads and validates the chat module's settings from a config-file section and the environment. */
export function loadChatConfig(file: unknown, env: Record<string, string | undefined>): ChatConfig {
  return loadConfig(chatSettings, {
    source: 'chat',
    file,
    env,
    refine: (config) => [
      ...(config.Events.DefaultLimit > config.Events.MaxLimit
        ? ['Events.DefaultLimit: must not exceed Events.MaxLimit']
        : []),
      ...smsSettingsProblems(config),
      ...telegramSettingsProblems(config.TelegramBot, config.Telegram),
      ...mailProblems(config),
    ],
  })
}

// The API key travels in a header, so it never crosses a network in clear text.
function mailProblems({ MailTransport, MailApi, SmtpSettings }: ChatConfig): string[] {
  const problems: string[] = []
  if (MailTransport === 'smtp' && !SmtpSettings.Host)
    problems.push('SmtpSettings.Host: required with MailTransport smtp')
  if ((MailTransport === 'postmark' || MailTransport === 'sendgrid') && !MailApi.Key)
    problems.push(`MailApi.Key: required with MailTransport ${MailTransport}`)
  if (MailApi.BaseUrl) {
    const url = URL.parse(MailApi.BaseUrl)
    const local = url?.protocol === 'http:' && isLoopbackHost(url.hostname)
    if (!url || (url.protocol !== 'https:' && !local) || url.username || url.password || url.search || url.hash)
      problems.push('MailApi.BaseUrl: must be an https: URL (or http: on this machine) without credentials or query')
  }
  return problems
}
