import { readBool, writeBool } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { CrmDatabase, ProfilesTable } from '../db/schema.ts'
import type { Contact, ContactKind } from './profiles.schema.ts'

/** A profile with its contacts, in kind order (email, phone, telegram) and then by value. */
export type Profile = ProfilesTable & { contacts: Contact[] }

/** Contact rows per INSERT statement (4 parameters each). */
const CONTACT_ROWS_PER_INSERT = 1000

const KIND_ORDER: Record<ContactKind, number> = { email: 0, phone: 1, telegram: 2 }

function byKindAndValue(a: Contact, b: Contact): number {
  return KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)
}

/** Sorts contacts the way profiles keep them, so two lists compare element by element. */
export function sortContacts(contacts: Contact[]): Contact[] {
  return [...contacts].sort(byKindAndValue)
}

/** Profiles and their contacts; a profile and its contacts are written together. */
export function createProfilesRepository(db: Kysely<CrmDatabase>) {
  /** The stored profiles among `ids`, by CRM id. */
  async function findMany(ids: number[]): Promise<Map<number, Profile>> {
    const found = new Map<number, Profile>()
    if (ids.length === 0) return found
    const rows = await db.selectFrom('profiles').selectAll().where('crm_id', 'in', ids).execute()
    for (const row of rows) found.set(row.crm_id, { ...row, contacts: [] })
    const contacts = await db.selectFrom('contacts').selectAll().where('crm_id', 'in', ids).execute()
    for (const contact of contacts) {
      found.get(contact.crm_id)?.contacts.push({
        kind: contact.kind as ContactKind,
        value: contact.value,
        verified: readBool(contact.verified),
      })
    }
    for (const profile of found.values()) profile.contacts.sort(byKindAndValue)
    return found
  }

  return {
    findMany,

    async find(crmId: number): Promise<Profile | undefined> {
      return (await findMany([crmId])).get(crmId)
    },

    /**
     * Stores profiles and replaces their contacts, in three statements however many there are;
     * run it in a transaction so that all land or none.
     */
    async saveMany(profiles: Profile[]): Promise<void> {
      if (profiles.length === 0) return
      await db
        .insertInto('profiles')
        .values(profiles.map(({ contacts: _, ...row }) => row))
        .onConflict((conflict) =>
          conflict.column('crm_id').doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            created: eb.ref('excluded.created'),
            timetick_update: eb.ref('excluded.timetick_update'),
          })),
        )
        .execute()
      await db
        .deleteFrom('contacts')
        .where(
          'crm_id',
          'in',
          profiles.map((profile) => profile.crm_id),
        )
        .execute()
      const contacts = profiles.flatMap((profile) =>
        profile.contacts.map((contact) => ({
          crm_id: profile.crm_id,
          kind: contact.kind,
          value: contact.value,
          verified: writeBool(contact.verified),
        })),
      )
      // Up to 500 × 20 contacts: in chunks, to stay under SQLite's 32766 bound parameters.
      for (let at = 0; at < contacts.length; at += CONTACT_ROWS_PER_INSERT) {
        await db
          .insertInto('contacts')
          .values(contacts.slice(at, at + CONTACT_ROWS_PER_INSERT))
          .execute()
      }
    },
  }
}

export type ProfilesRepository = ReturnType<typeof createProfilesRepository>
