/**
 * The CrmDB tables as Kysely sees them. Every column is NOT NULL with a default (spec: no NULL
 * fields); ids and ticks are timeticks, times are epoch milliseconds, booleans are 0/1 integers.
 */

/** A person as the gateway last described them (POST /private/v1/set_profiles). */
export interface ProfilesTable {
  /** The CRM id: the identity the gateway forwards in X-Crm. */
  crm_id: number
  /** The display name the person chose; '' for none (shown as `User` and the id's last four digits). */
  name: string
  /** When the user was created at the gateway, epoch milliseconds. */
  created: number
  /** When this row last changed in the CRM (a timetick); unchanged profiles sent again keep it. */
  timetick_update: number
}

/** An email address, phone number or Telegram account of a person. */
export interface ContactsTable {
  crm_id: number
  /** `email`, `phone` or `telegram`. */
  kind: string
  /** Lower-case email, E.164 phone, or the Telegram user id. */
  value: string
  /** 1 when the person proved they hold it (see docs/crm.md, "Verified contacts"). */
  verified: number
}

export interface CrmDatabase {
  profiles: ProfilesTable
  contacts: ContactsTable
}
