import { TIMETICK_PATTERN } from '@atrium/platform'
import { Type } from 'typebox'

/** Longest SMS text in characters (Twilio's limit; providers split it into segments). */
export const MAX_SMS_CHARACTERS = 1600

const ProviderNames = [
  Type.Literal('twilio'),
  Type.Literal('vonage'),
  Type.Literal('plivo'),
  Type.Literal('sinch'),
  Type.Literal('telnyx'),
] as const
const Provider = Type.Union([...ProviderNames, Type.Literal('outbox')], {
  description: 'Who accepted the text: a provider, or the development outbox.',
})

/** POST /SendSMS: one text to one number through SmsSender (and SmsFailover). */
export const sendSms = {
  body: Type.Object(
    {
      to: Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164 number: +, country code, number.' }),
      text: Type.String({
        minLength: 1,
        maxLength: MAX_SMS_CHARACTERS,
        description: `The text, 1–${MAX_SMS_CHARACTERS} characters.`,
      }),
      crm_id: Type.Optional(
        Type.String({ pattern: TIMETICK_PATTERN, description: 'CRM id of the person, for the log and record.' }),
      ),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      provider: Provider,
      message_id: Type.String({ description: "The provider's message id ('' for the outbox)." }),
      to: Type.String({ description: 'The masked number, e.g. +49*******567.' }),
    }),
  },
}

/** GET /SmsStatus: the latest delivery status of a sent text. */
export const smsStatus = {
  querystring: Type.Object(
    {
      provider: Type.Union([...ProviderNames]),
      message_id: Type.String({ minLength: 1, maxLength: 100 }),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      provider: Type.String(),
      message_id: Type.String(),
      to: Type.String(),
      status: Type.String({ description: 'queued, sent, delivered, undelivered or failed.' }),
      provider_status: Type.String({ description: "The provider's last status word ('' until a callback)." }),
      error_code: Type.String({ description: "The provider's error code, '' when none." }),
      sent_at: Type.String({ description: 'Timetick of the send.' }),
      updated_at: Type.String({ description: 'Timetick of the last status change.' }),
    }),
  },
}

/** The path parameter of a status callback. */
export const statusCallback = {
  params: Type.Object({
    provider: Type.Union([...ProviderNames]),
  }),
}
