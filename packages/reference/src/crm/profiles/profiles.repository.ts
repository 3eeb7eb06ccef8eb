import { readBool, writeBool } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { CrmDatabase, ProfilesTable } from '../db/schema.ts'
import type { Contact, ContactKind } from './profiles.schema.ts'

/** A profile with its contacts, in kind order (email, phone, telegram) and then by value. */
export type Profile = ProfilesTable & { contacts: Contact[] }

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

    /** Stores a profile and replaces its contacts; run it in a transaction so both land or neither. */
    async save(profile: Profile): Promise<void> {
      const { contacts, ...row } = profile
      await db
        .insertInto('profiles')
        .values(row)
        .onConflict((conflict) =>
          conflict
            .column('crm_id')
            .doUpdateSet({ name: row.name, created: row.created, timetick_update: row.timetick_update }),
        )
        .execute()
      await db.deleteFrom('contacts').where('crm_id', '=', row.crm_id).execute()
      if (contacts.length > 0) {
        await db
          .insertInto('contacts')
          .values(
            contacts.map((contact) => ({
              crm_id: row.crm_id,
              kind: contact.kind,
              value: contact.value,
              verified: writeBool(contact.verified),
            })),
          )
          .execute()
      }
    },
  }
}

export type ProfilesRepository = ReturnType<typeof createProfilesRepository>
