import type { DatabaseDialect } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { HIDDEN_FLAGS } from '../visibility.ts'

/**
 * The feed's index: visible messages (not deleted, not widget commands, not reactions) of a chat in
 * id order. Pages and unread counts read it directly; PostgreSQL's planner otherwise misjudges the
 * flag test and scans a whole chat. The predicate is written with literals, as the queries are, so
 * both planners can match it.
 */
export async function up(db: Kysely<unknown>, dialect: DatabaseDialect): Promise<void> {
  await sql`CREATE INDEX chat_mess_visible ON chat_mess (chat_id, timetick)
    WHERE (flags & ${sql.lit(HIDDEN_FLAGS)}) = 0 AND link_kind <> ${sql.lit(2)}`.execute(db)
  if (dialect === 'sqlite') {
    // Each small write transaction adds an FTS5 segment; merging them on every commit tripled the
    // cost of a send. Segments are still merged when 16 pile up at one level (crisismerge).
    await sql`INSERT INTO chat_mess_fts (chat_mess_fts, rank) VALUES ('automerge', 0)`.execute(db)
  }
}
