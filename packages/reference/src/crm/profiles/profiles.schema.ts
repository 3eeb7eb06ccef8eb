import { DISPLAY_NAME_MAX, DISPLAY_NAME_PATTERN } from '@atrium/platform'
import { type Static, Type } from 'typebox'

/** Most profiles one set_profiles call stores (the chat module's limit too). */
export const MAX_PROFILES_PER_CALL = 500
/** Most contacts of one profile. */
export const MAX_CONTACTS = 20
/** Longest contact value: an email address is at most 254 characters. */
const MAX_CONTACT_VALUE = 254

/** A CRM id as JSON carries it: a positive decimal timetick, never 0. */
export const CrmId = Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'A CRM id, decimal.' })

export const Contact = Type.Object(
  {
    kind: Type.Union([Type.Literal('email'), Type.Literal('phone'), Type.Literal('telegram')], {
      description: '`email`, `phone` or `telegram`.',
    }),
    value: Type.String({
      minLength: 1,
      maxLength: MAX_CONTACT_VALUE,
      pattern: DISPLAY_NAME_PATTERN,
      description: 'Lower-case email address, E.164 phone number, or Telegram user id.',
    }),
    verified: Type.Boolean({ description: 'The person proved they hold it (docs/crm.md, "Verified contacts").' }),
  },
  { additionalProperties: false },
)
export type Contact = Static<typeof Contact>
export type ContactKind = Contact['kind']

/** An ISO 8601 UTC time as `Date.prototype.toISOString` writes it (milliseconds optional). */
export const IsoTime = Type.String({
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,3})?Z$',
  description: 'ISO 8601 UTC, e.g. `2026-11-26T03:44:36.000Z`.',
})

/** One person in POST /private/v1/set_profiles: the chat module's `{member, name}`, plus what the CRM keeps. */
export const ProfileInput = Type.Object(
  {
    member: CrmId,
    name: Type.Union([Type.Literal(''), Type.String({ maxLength: DISPLAY_NAME_MAX, pattern: DISPLAY_NAME_PATTERN })], {
      description: "The person's display name; '' for none.",
    }),
    created: Type.Optional(
      Type.Union([IsoTime, Type.Null()], {
        description: 'When the user was created at the gateway; omitted or null: keep.',
      }),
    ),
    contacts: Type.Optional(
      Type.Union([Type.Array(Contact, { maxItems: MAX_CONTACTS }), Type.Null()], {
        description: "The person's whole contact list, replacing the stored one; omitted or null: keep.",
      }),
    ),
  },
  { additionalProperties: false },
)
export type ProfileInput = Static<typeof ProfileInput>

/** The answer of GET /crm/v1/user_info (the MCP tool user_info). */
export const UserInfo = Type.Object({
  crm_id: Type.String({ description: 'The CRM id, decimal.' }),
  name: Type.String({ description: 'The name others see: the display name or `User` and the last four digits.' }),
  contacts: Type.Array(Contact, { description: 'Empty when the caller may not see them (docs/crm.md).' }),
  created: Type.String({ description: 'When the user was created at the gateway, ISO 8601 UTC.' }),
})
export type UserInfo = Static<typeof UserInfo>
