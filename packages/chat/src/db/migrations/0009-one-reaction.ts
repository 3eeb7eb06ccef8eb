import { ChatMessFlags, LinkKind } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { isLiveReaction } from '../visibility.ts'

/**
 * One live reaction per member, emoji and message, enforced by the database (issue 14, item 11):
 * reactions were read, then inserted, so on PostgreSQL parallel reactions by one member each found
 * none and each inserted a row. Duplicates written that way are removed first, keeping the oldest.
 * Removed reactions (soft-deleted rows) stay outside the index, so a reaction can come and go.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM chat_mess WHERE ${isLiveReaction()} AND EXISTS (
      SELECT 1 FROM chat_mess AS older
      WHERE older.link_kind = ${sql.lit(LinkKind.Reaction)} AND (older.flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0
        AND older.linked_message_id = chat_mess.linked_message_id
        AND older.owner = chat_mess.owner AND older.content = chat_mess.content
        AND older.timetick < chat_mess.timetick)`.execute(db)
  await sql`CREATE UNIQUE INDEX chat_mess_one_reaction ON chat_mess (linked_message_id, owner, content)
    WHERE ${isLiveReaction()}`.execute(db)
}
