import { ApiError, ContactFlags, isUniqueViolation, type TimetickGenerator } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { parseScopes } from '../auth/caller.ts'
import type { ContactsTable, GatewayDatabase, UsersTable } from '../db/schema.ts'
import { createInvalidations, type Invalidations } from '../server/invalidations.ts'

/** What a contact is. */
export const ContactKind = { Email: 1, Phone: 2 } as const
export type ContactKindValue = (typeof ContactKind)[keyof typeof ContactKind]

export type User = UsersTable
export type Contact = ContactsTable

/** Lower-cases and trims an email address; undefined when it is not one. */
export function normalizeEmail(text: string): string | undefined {
  const email = text.trim().toLowerCase()
  return email.length <= 254 &&
    /^[^\s@<>()",;:\\]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/.test(email)
    ? email
    : undefined
}

/** Reduces a phone number to E.164 (`+` and 8–15 digits); undefined when it is not one. */
export function normalizePhone(text: string): string | undefined {
  const compact = text.trim().replace(/[\s().-]/g, '')
  const phone = compact.startsWith('00') ? `+${compact.slice(2)}` : compact
  return /^\+[1-9][0-9]{7,14}$/.test(phone) ? phone : undefined
}

/** A contact an operator typed: an email address (it has an `@`) or a phone number, normalised; undefined when it is neither. */
export function parseContact(text: string): { kind: ContactKindValue; value: string } | undefined {
  const value = text.includes('@') ? normalizeEmail(text) : normalizePhone(text)
  if (value === undefined) return undefined
  return { kind: text.includes('@') ? ContactKind.Email : ContactKind.Phone, value }
}

/** Users (the CRM id is the identity) and their phone and email contacts. */
export function createUsers(
  db: Kysely<GatewayDatabase>,
  nextTick: TimetickGenerator,
  now: () => number = Date.now,
  invalidations: Invalidations = createInvalidations(),
) {
  // Told after this process changed a user, so the profile sync pushes the change soon (docs/people.md).
  const watchers = new Set<() => void>()
  function changed() {
    for (const watcher of watchers) watcher()
  }

  async function get(crmId: number): Promise<User | undefined> {
    return db.selectFrom('users').selectAll().where('crm_id', '=', crmId).executeTakeFirst()
  }

  /** Marks a user changed (a new timetick_update) when something of theirs outside the row changed, e.g. a contact. */
  async function touch(crmId: number): Promise<void> {
    await db.updateTable('users').set({ timetick_update: nextTick() }).where('crm_id', '=', crmId).execute()
    changed()
  }

  return {
    get,
    touch,

    /** Creates a user with an optional name and scopes. */
    async create({ name = '', scopes = [] as string[] } = {}): Promise<User> {
      const user: User = {
        crm_id: nextTick(),
        name,
        scopes: scopes.join(' '),
        created: now(),
        timetick_update: nextTick(),
      }
      await db.insertInto('users').values(user).execute()
      changed()
      return user
    },

    /** Sets the display name ('' clears it); false when there is no such user. */
    async setName(crmId: number, name: string): Promise<boolean> {
      const result = await db
        .updateTable('users')
        .set({ name, timetick_update: nextTick() })
        .where('crm_id', '=', crmId)
        .executeTakeFirst()
      changed()
      return result.numUpdatedRows > 0n
    },

    /** Users whose row changed after the tick (timetick_update), oldest change first. */
    async changedAfter(tick: number, limit: number): Promise<User[]> {
      return db
        .selectFrom('users')
        .selectAll()
        .where('timetick_update', '>', tick)
        .orderBy('timetick_update')
        .limit(limit)
        .execute()
    },

    /**
     * Users whose display name contains `text`, ignoring case (ASCII letters on SQLite), in name
     * order; `%`, `_` and `\` in the text match themselves.
     */
    async findByName(text: string, limit: number, except: number): Promise<User[]> {
      const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`
      return db
        .selectFrom('users')
        .selectAll()
        .where(sql<boolean>`lower(name) like ${pattern} escape '\\'`)
        .where('crm_id', '!=', except)
        .orderBy('name')
        .orderBy('crm_id')
        .limit(limit)
        .execute()
    },

    /** The users with these CRM ids (those that exist), in one query. */
    async getMany(crmIds: number[]): Promise<User[]> {
      if (crmIds.length === 0) return []
      return db.selectFrom('users').selectAll().where('crm_id', 'in', crmIds).execute()
    },

    /**
     * A page of users, newest first (ids below `before`), optionally those whose name contains
     * `name` (ignoring case, as findByName): the operator panel's user list.
     */
    async page(filter: { name?: string; before?: number; limit: number }): Promise<User[]> {
      let query = db.selectFrom('users').selectAll()
      if (filter.name) {
        const pattern = `%${filter.name.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`
        query = query.where(sql<boolean>`lower(name) like ${pattern} escape '\\'`)
      }
      if (filter.before !== undefined) query = query.where('crm_id', '<', filter.before)
      return query.orderBy('crm_id', 'desc').limit(filter.limit).execute()
    },

    /** Calls `listener` after each change this process makes to a user; returns a function that stops it. */
    watch(listener: () => void): () => void {
      watchers.add(listener)
      return () => watchers.delete(listener)
    },

    async setScopes(crmId: number, scopes: string[]): Promise<boolean> {
      const result = await db
        .updateTable('users')
        .set({ scopes: [...new Set(scopes)].join(' '), timetick_update: nextTick() })
        .where('crm_id', '=', crmId)
        .executeTakeFirst()
      changed()
      // The authenticator trusts scopes it read for a few seconds; this and every other worker drop them now.
      await invalidations.publish({ kind: 'user', crmId })
      return result.numUpdatedRows > 0n
    },

    /** Invalidations of cached user data (authenticate.ts keeps scopes). */
    invalidations,

    scopesOf(user: User): string[] {
      return parseScopes(user.scopes)
    },

    /** The contact with this normalised value, if any user has it. */
    async findContact(kind: ContactKindValue, value: string): Promise<Contact | undefined> {
      return db
        .selectFrom('contacts')
        .selectAll()
        .where('kind', '=', kind)
        .where('value', '=', value)
        .executeTakeFirst()
    },

    async contactsOf(crmId: number): Promise<Contact[]> {
      return db.selectFrom('contacts').selectAll().where('crm_id', '=', crmId).orderBy('id').execute()
    },

    /** The contacts of several users, oldest first. */
    async contactsOfUsers(crmIds: number[]): Promise<Contact[]> {
      if (crmIds.length === 0) return []
      return db.selectFrom('contacts').selectAll().where('crm_id', 'in', crmIds).orderBy('id').execute()
    },

    /**
     * The user who owns this contact, creating both when nobody does; the contact gets `flags`
     * added (a login flow that proved the address passes Verified). Safe under concurrent calls.
     */
    async userForContact(
      kind: ContactKindValue,
      value: string,
      flags: number,
    ): Promise<{ user: User; created: boolean }> {
      for (let attempt = 0; ; attempt++) {
        const existing = await db
          .selectFrom('contacts')
          .selectAll()
          .where('kind', '=', kind)
          .where('value', '=', value)
          .executeTakeFirst()
        if (existing) {
          if ((existing.flags & flags) !== flags) {
            await db
              .updateTable('contacts')
              .set({ flags: existing.flags | flags })
              .where('id', '=', existing.id)
              .execute()
            // A contact newly verified changes the profile the modules are told (docs/crm.md).
            await touch(existing.crm_id)
          }
          const user = await get(existing.crm_id)
          if (user) return { user, created: false }
        }
        try {
          const user = await db.transaction().execute(async (trx) => {
            const at = now()
            const row: User = { crm_id: nextTick(), name: '', scopes: '', created: at, timetick_update: nextTick() }
            await trx.insertInto('users').values(row).execute()
            await trx
              .insertInto('contacts')
              .values({ id: nextTick(), crm_id: row.crm_id, kind, value, flags, created: at })
              .execute()
            return row
          })
          changed()
          return { user, created: true }
        } catch (error) {
          // Another sign-in created the contact first: read it on the next pass.
          if (attempt >= 2) throw error
        }
      }
    },

    /**
     * Sets the flags of one of a user's contacts (an operator marking it verified or not); the
     * updated contact, or undefined when the user has no such contact.
     */
    async setContactFlags(crmId: number, id: number, flags: number): Promise<Contact | undefined> {
      const { numUpdatedRows } = await db
        .updateTable('contacts')
        .set({ flags })
        .where('id', '=', id)
        .where('crm_id', '=', crmId)
        .executeTakeFirst()
      if (numUpdatedRows === 0n) return undefined
      // A contact's verification is part of the profile the modules are told (docs/crm.md).
      await touch(crmId)
      return db.selectFrom('contacts').selectAll().where('id', '=', id).executeTakeFirst()
    },

    /**
     * Removes one of a user's contacts (CLI, admin): the removed contact, or undefined when the
     * user has no such contact. The user's sessions stay; signing in by that address no longer
     * finds them.
     */
    async removeContact(crmId: number, id: number): Promise<Contact | undefined> {
      const contact = await db
        .selectFrom('contacts')
        .selectAll()
        .where('id', '=', id)
        .where('crm_id', '=', crmId)
        .executeTakeFirst()
      if (!contact) return undefined
      await db.deleteFrom('contacts').where('id', '=', id).where('crm_id', '=', crmId).execute()
      // The user's contacts are part of the profile the modules are told (docs/crm.md).
      await touch(crmId)
      return contact
    },

    /** Adds a contact to a user by hand (CLI, admin): flagged ManuallyAdded, plus `flags`. */
    async addContact(crmId: number, kind: ContactKindValue, value: string, flags = 0): Promise<Contact> {
      const contact: Contact = {
        id: nextTick(),
        crm_id: crmId,
        kind,
        value,
        flags: flags | ContactFlags.ManuallyAdded,
        created: now(),
      }
      await db.insertInto('contacts').values(contact).execute()
      await touch(crmId)
      return contact
    },
  }
}

export type Users = ReturnType<typeof createUsers>

/**
 * Gives a user a contact an operator typed (CLI, admin), Verified when `verified`: refused when
 * it is neither an email address nor a phone number (InvalidRequest) or is some user's already
 * (Conflict, naming them; the database's unique index decides a race).
 */
export async function addContactByHand(
  users: Pick<Users, 'findContact' | 'addContact'>,
  crmId: number,
  text: string,
  verified: boolean,
): Promise<Contact> {
  const contact = parseContact(text)
  if (!contact) {
    throw new ApiError(
      'InvalidRequest',
      `${JSON.stringify(text.slice(0, 100))} is neither an email address nor a phone number (+ and 8 to 15 digits).`,
    )
  }
  const owned = (owner: number) =>
    new ApiError('Conflict', `${contact.value} belongs to ${owner === crmId ? 'this user' : `user ${owner}`} already.`)
  const taken = await users.findContact(contact.kind, contact.value)
  if (taken) throw owned(taken.crm_id)
  try {
    return await users.addContact(crmId, contact.kind, contact.value, verified ? ContactFlags.Verified : 0)
  } catch (error) {
    const winner = isUniqueViolation(error) ? await users.findContact(contact.kind, contact.value) : undefined
    throw winner ? owned(winner.crm_id) : error
  }
}
