import type { Kysely } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'

/** All SQL of the chat_profiles table. */
export function createProfilesRepository(db: Kysely<ChatDatabase>) {
  return {
    /** Display names by member id; members without a profile are absent. */
    async names(members: number[]): Promise<Map<number, string>> {
      if (members.length === 0) return new Map()
      const rows = await db
        .selectFrom('chat_profiles')
        .select(['member', 'name'])
        .where('member', 'in', members)
        .execute()
      return new Map(rows.map((row) => [row.member, row.name]))
    },

    async setName(member: number, name: string, tick: number): Promise<void> {
      await db
        .insertInto('chat_profiles')
        .values({ member, name, timetick_update: tick })
        .onConflict((conflict) => conflict.column('member').doUpdateSet({ name, timetick_update: tick }))
        .execute()
    },
  }
}

export type ProfilesRepository = ReturnType<typeof createProfilesRepository>
