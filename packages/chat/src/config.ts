import { commonSettings, loadConfig, moduleEventsSettings, type Settings } from '@atrium/platform'
import { Type } from 'typebox'

/** Every chat module setting; docs/configuration.md is generated from this declaration. */
export const chatSettings = Type.Object(
  {
    ...commonSettings({ host: '127.0.0.1', port: 8081 }),
    ChatDB: Type.String({
      default: 'sqlite:data/chat.db',
      description: 'Chat database (ChatDB): `sqlite:<path>` (embedded default) or `postgres://…`.',
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
        From: Type.String({ default: 'Atrium <no-reply@localhost>', description: 'From: address of outgoing mail.' }),
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
    SmsSender: Type.String({ default: '', description: 'Selected SMS provider; empty: SMS delivery is off.' }),
    Sms: Type.Object(
      {
        AccountId: Type.String({ default: '', description: 'SMS provider account id.' }),
        AuthToken: Type.String({ default: '', description: 'SMS provider auth token.' }),
        From: Type.String({ default: '', description: 'SMS sender number.' }),
      },
      { default: {}, additionalProperties: false },
    ),
    TelegramBot: Type.String({ default: '', description: 'Telegram bot token; empty: Telegram delivery is off.' }),
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
    refine: (config) =>
      config.Events.DefaultLimit > config.Events.MaxLimit
        ? ['Events.DefaultLimit: must not exceed Events.MaxLimit']
        : [],
  })
}
