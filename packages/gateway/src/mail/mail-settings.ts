import { Type } from 'typebox'
import type { GatewayConfig } from '../config.ts'

/** The inbound email bridge's settings (spec "The gateway" item 11; docs/delivery.md). */
export const mailSettings = {
  MailBridge: Type.Object(
    {
      Enabled: Type.Boolean({
        default: false,
        description: 'Run the SMTP listener that turns inbound mail into chat messages (needs Modules.chat).',
      }),
      Host: Type.String({ default: '0.0.0.0', minLength: 1, description: 'Address the SMTP listener binds.' }),
      Port: Type.Integer({
        default: 2525,
        minimum: 0,
        maximum: 65535,
        description: 'SMTP port: 25 in production (the MX target), a high port in development; 0 picks a free one.',
      }),
      Domain: Type.String({
        default: '',
        pattern: '^([A-Za-z0-9-]+\\.)*[A-Za-z0-9-]+$|^$',
        description:
          'The project domain of bridge addresses (`code@<Domain>`, `<crm id>@<Domain>`); empty: the host of PublicOrigin.',
      }),
      MaxBytes: Type.Integer({
        default: 1024 * 1024,
        minimum: 1024,
        maximum: 50 * 1024 * 1024,
        description: 'Largest message accepted (announced with SIZE); a larger one is refused with 552.',
      }),
      MaxAttachments: Type.Integer({
        default: 10,
        minimum: 0,
        maximum: 100,
        description:
          'Attachments (inline pictures and attached messages included) one message may carry; more are refused with 552 (0: mail with attachments is refused).',
      }),
      MaxAttachmentBytes: Type.Integer({
        default: 10 * 1024 * 1024,
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          "Decoded bytes of one message's attachments together; more is refused with 552. Each file also passes Files.MaxFileSize, Files.DeniedContentTypes and the addressed user's Files.QuotaBytes.",
      }),
      MaxRecipients: Type.Integer({
        default: 5,
        minimum: 1,
        maximum: 100,
        description: 'Bridge addresses one message may name; more are refused at RCPT with 452.',
      }),
      PerSenderPerHour: Type.Integer({
        default: 30,
        minimum: 0,
        description:
          'Messages one envelope sender (or, for bounces, one client IP) may start within an hour; more get 450 at MAIL FROM (0: off).',
      }),
      MaxConnections: Type.Integer({
        default: 100,
        minimum: 1,
        description: 'SMTP sessions open at once; one more is answered 421 and closed.',
      }),
      TimeoutMs: Type.Integer({
        default: 60_000,
        minimum: 1000,
        description: 'An SMTP client silent this long is disconnected.',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
}

/** The bridge stores mail through the chat module, so it needs one. */
export function checkMailBridge(config: GatewayConfig): string[] {
  return config.MailBridge.Enabled && !config.Modules.chat
    ? ['MailBridge.Enabled: needs Modules.chat, the chat module the mail is stored in']
    : []
}
