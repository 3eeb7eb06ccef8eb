import { type Static, Type } from 'typebox'

/** The Telegram section of the chat module's settings (the token itself is TelegramBot). */
export const telegramSettings = Type.Object(
  {
    ApiRoot: Type.String({
      default: 'https://api.telegram.org',
      pattern: '^https?://[^\\s/]+(/[^\\s]*[^\\s/])?$',
      description:
        'Base URL of the Bot API, without a trailing slash; methods are called at `<ApiRoot>/bot<token>/<method>`. Change it only for a local Bot API server (or a test double).',
    }),
    Updates: Type.Union([Type.Literal('polling'), Type.Literal('webhook'), Type.Literal('off')], {
      default: 'polling',
      description:
        'How the bot receives messages: `polling` (getUpdates; development, or one instance without a public address), `webhook` (Telegram posts to WebhookUrl through the gateway) or `off` (this instance only sends). Exactly one chat instance may poll.',
    }),
    WebhookUrl: Type.String({
      default: '',
      description:
        'Public https URL Telegram posts updates to, e.g. `https://example.com/telegram/v1/webhook` (a gateway route `/telegram/` to the chat module, without RequireSession). Set with setWebhook at start when Updates is `webhook`.',
    }),
    WebhookSecret: Type.String({
      default: '',
      pattern: '^[A-Za-z0-9_-]{0,256}$',
      description:
        'Secret Telegram sends in X-Telegram-Bot-Api-Secret-Token with every update (16–256 of A–Z, a–z, 0–9, `_`, `-`); required with Updates `webhook`. Updates without it are refused.',
    }),
    LinkTtlMinutes: Type.Integer({
      default: 10,
      minimum: 1,
      maximum: 1440,
      description: 'How long a "Link Telegram" deep link works; it works once.',
    }),
    Notifications: Type.Boolean({
      default: true,
      description:
        'This instance takes part in sending chat notifications to people who turned them on. Several chat instances may all have it on: one sends at a time under a lease in the database, and another takes over when it stops or dies (docs/delivery.md).',
    }),
    NotifyIntervalSeconds: Type.Integer({
      default: 60,
      minimum: 0,
      maximum: 86_400,
      description:
        'At most one notification per person and chat in this many seconds; messages in between are counted in the next one. 0: every message.',
    }),
    ChatUrl: Type.String({
      default: '',
      pattern: '^(https?://[^\\s]+/)?$',
      description:
        'Public URL of the web client’s chat screen, ending in `/`, e.g. `https://example.com/chat/`; notifications link to `<ChatUrl>c/<chat id>`. Empty: no link.',
    }),
    Widgets: Type.Object(
      {
        Refresh: Type.Boolean({
          default: true,
          description:
            'This instance keeps live widget messages fresh (docs/telegram-widgets.md). Several chat instances may all have it on: each refresh claims its message first.',
        }),
        RefreshSeconds: Type.Integer({
          default: 60,
          minimum: 1,
          maximum: 86_400,
          description: 'How often the built-in widgets are refreshed while live.',
        }),
        MinRefreshSeconds: Type.Integer({
          default: 10,
          minimum: 1,
          maximum: 86_400,
          description:
            'Shortest refresh interval an operator may give a custom widget (the longest is 86400, a day); it keeps the bot within Telegram’s edit limits.',
        }),
        LiveHours: Type.Number({
          default: 6,
          minimum: 0.01,
          maximum: 168,
          description:
            'How long a widget message stays live after it was posted; then it is marked as no longer refreshed. Sending the command again posts a fresh one.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
  },
  { default: {}, additionalProperties: false },
)

export type TelegramSettings = Static<typeof telegramSettings>

/** Problems across the Telegram settings, in the config loader's `Name: problem` form. */
export function telegramSettingsProblems(token: string, settings: TelegramSettings): string[] {
  const problems: string[] = []
  if (token !== '' && !/^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$/.test(token))
    problems.push('TelegramBot: must be a bot token as @BotFather gives it (`<digits>:<letters>`)')
  if (token !== '' && settings.Updates === 'webhook') {
    if (!settings.WebhookUrl.startsWith('https://'))
      problems.push('Telegram.WebhookUrl: an https URL is required with Updates "webhook"')
    if (settings.WebhookSecret.length < 16)
      problems.push('Telegram.WebhookSecret: at least 16 characters are required with Updates "webhook"')
  }
  return problems
}
