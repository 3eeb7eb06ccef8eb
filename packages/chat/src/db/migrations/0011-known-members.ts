import { type Kysely, sql } from 'kysely'

/**
 * Every member of an existing chat becomes a known user (issue 16, item 1): operations that name a
 * member now refuse ids without a chat_profiles row, and chats made before that rule must keep
 * working. Members without a profile get one with an empty name (no display name chosen).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`INSERT INTO chat_profiles (member, name, timetick_update)
    SELECT DISTINCT member, '', 0 FROM chat_members
    WHERE member NOT IN (SELECT member FROM chat_profiles)`.execute(db)
}
