import type { Kysely } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'

/** A display name to store: '' means the person has not chosen one (docs/people.md). */
export interface ProfileInput {
  member: number
  name: string
}

/** All SQL of the chat_profiles table. */
export function createProfilesRepository(db: Kysely<ChatDatabase>) {
  return {
    /** Stored names by member id ('' when none was chosen); members without a profile are absent. */
    async names(members: number[]): Promise<Map<number, string>> {
      if (members.length === 0) return new Map()
      const rows = await db
        .selectFrom('chat_profiles')
        .select(['member', 'name'])
        .where('member', 'in', [...new Set(members)])
        .execute()
      return new Map(rows.map((row) => [row.member, row.name]))
    },

    /** A person's scopes at the gateway as the profile sync last sent them; none when unknown. */
    async scopesOf(member: number): Promise<string[]> {
      const row = await db.selectFrom('chat_profiles').select('scopes').where('member', '=', member).executeTakeFirst()
      return (row?.scopes ?? '').split(' ').filter(Boolean)
    },

    /** Stores the scopes of people who have a profile (setNames first); unchanged ones are not written. */
    async setScopes(entries: Array<{ member: number; scopes: string[] }>): Promise<void> {
      for (const { member, scopes } of entries) {
        const joined = [...new Set(scopes)].join(' ')
        await db
          .updateTable('chat_profiles')
          .set({ scopes: joined })
          .where('member', '=', member)
          .where('scopes', '<>', joined)
          .execute()
      }
    },

    /** The ids among `members` that are neither a registered person (a profile) nor a guest. */
    async unknown(members: number[]): Promise<number[]> {
      if (members.length === 0) return []
      const wanted = [...new Set(members)]
      const [profiles, guests] = await Promise.all([
        db.selectFrom('chat_profiles').select('member').where('member', 'in', wanted).execute(),
        db.selectFrom('guests').select('timetick').where('timetick', 'in', wanted).execute(),
      ])
      const known = new Set([...profiles.map((row) => row.member), ...guests.map((row) => row.timetick)])
      return wanted.filter((member) => !known.has(member))
    },

    /**
     * Stores each profile (an upsert, so parallel registrations of one person leave one row);
     * returns those whose name differed from the stored one, or that were new.
     */
    async setNames(profiles: ProfileInput[], tick: number): Promise<ProfileInput[]> {
      if (profiles.length === 0) return []
      const before = await db
        .selectFrom('chat_profiles')
        .select(['member', 'name'])
        .where(
          'member',
          'in',
          profiles.map((profile) => profile.member),
        )
        .execute()
      const stored = new Map(before.map((row) => [row.member, row.name]))
      const changed = profiles.filter((profile) => stored.get(profile.member) !== profile.name)
      for (const { member, name } of changed) {
        await db
          .insertInto('chat_profiles')
          .values({ member, name, timetick_update: tick })
          .onConflict((conflict) => conflict.column('member').doUpdateSet({ name, timetick_update: tick }))
          .execute()
      }
      return changed
    },
  }
}

export type ProfilesRepository = ReturnType<typeof createProfilesRepository>
