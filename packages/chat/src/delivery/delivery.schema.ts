import { TIMETICK_PATTERN } from '@atrium/platform'
import { Type } from 'typebox'

/** Largest text or HTML body of SendEmail, in UTF-8 bytes. */
export const MAX_BODY_BYTES = 100 * 1024

const Email = Type.String({ format: 'email', maxLength: 254, description: 'An email address.' })
const CrmId = Type.String({ pattern: TIMETICK_PATTERN, description: 'CRM id of the user, for the log.' })
const Phone = Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164 phone number.' })
const TelegramChatId = Type.String({ pattern: '^-?[1-9][0-9]{0,15}$', description: 'Telegram chat id.' })
const Code = Type.String({ pattern: '^[0-9A-Za-z]{4,10}$', description: 'The one-time code: 4–10 digits or letters.' })
const Purpose = Type.Union(
  [
    Type.Literal('sign-in'),
    Type.Literal('sign-up'),
    Type.Literal('verify-contact'),
    Type.Literal('reset-password'),
    Type.Literal('confirm'),
  ],
  { default: 'sign-in', description: 'What the code is for; picks the wording.' },
)
const Locale = Type.String({
  pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$',
  maxLength: 35,
  description: 'BCP 47 language tag of the recipient (messages are English for now).',
})
// Header values must stay on one line, or a CR/LF could start a header of the caller's choosing.
const Subject = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\r\\n]*$', description: 'Subject line.' })
const Channel = Type.Union([Type.Literal('telegram'), Type.Literal('email'), Type.Literal('sms')])
const OtpResult = Type.Object({
  channel: Channel,
  to: Type.String({ description: 'The masked destination, e.g. a***@example.com.' }),
})

/** POST /SendOTP: an OTP on the first available channel in the spec's order. */
export const sendOtp = {
  body: Type.Object(
    {
      crm_id: Type.Optional(CrmId),
      email: Type.Optional(Email),
      phone: Type.Optional(Phone),
      telegram_chat_id: Type.Optional(TelegramChatId),
      code: Code,
      channels: Type.Integer({ minimum: 1, maximum: 7, description: 'Allowed CommunicationChannel flags.' }),
      purpose: Purpose,
      locale: Type.Optional(Locale),
    },
    { additionalProperties: false },
  ),
  response: { 200: OtpResult },
}

/** POST /SendEmailOTP: an OTP by email. */
export const sendEmailOtp = {
  body: Type.Object(
    {
      email: Email,
      code: Code,
      purpose: Purpose,
      locale: Type.Optional(Locale),
      link: Type.Optional(
        Type.String({
          maxLength: 2048,
          pattern: '^https?://[^\\s]+$',
          description: 'A link that does what the code does (e.g. a magic sign-in link), shown under the code.',
        }),
      ),
      valid_minutes: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 1440, description: 'How long the code (and link) work, for the wording.' }),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: OtpResult },
}

/** POST /SendEmail: an arbitrary email from a trusted module. */
export const sendEmail = {
  body: Type.Object(
    {
      to: Type.Union([Email, Type.Array(Email, { minItems: 1, maxItems: 50 })]),
      subject: Subject,
      text: Type.String({ maxLength: MAX_BODY_BYTES, description: 'Plain-text body, at most 100 KB.' }),
      html: Type.Optional(
        Type.String({ maxLength: MAX_BODY_BYTES, description: 'HTML body, sent as given, at most 100 KB.' }),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ message_id: Type.String() }) },
}

/** POST /SendEmailPassReset: the password-reset email with its link. */
export const sendEmailPassReset = {
  body: Type.Object(
    {
      email: Email,
      reset_url: Type.String({ format: 'uri', maxLength: 2048, description: 'https: link to the reset page.' }),
      crm_id: Type.Optional(CrmId),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ to: Type.String(), message_id: Type.String() }) },
}
