import type { DatabaseDialect } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'

/**
 * SQLite: the search index's segments are merged a little at every write instead of all at once.
 * With automerge off (0004), FTS5 merged a level only when 16 segments piled up on it, in one go
 * inside the writing commit; on a big index that took seconds, and node:sqlite is synchronous, so
 * the whole chat process stood still (4.5 s during a send benchmark with a million messages).
 * automerge 16 starts an incremental merge when a level holds 16 segments, carried on by the
 * writes that follow; crisismerge 64 is the all-at-once fallback should writes outpace it. Same
 * fan-in as before, so about the same total work (docs/benchmarks.md, issue 3).
 */
export async function up(db: Kysely<unknown>, dialect: DatabaseDialect): Promise<void> {
  if (dialect !== 'sqlite') return
  await sql`INSERT INTO chat_mess_fts (chat_mess_fts, rank) VALUES ('automerge', 16)`.execute(db)
  await sql`INSERT INTO chat_mess_fts (chat_mess_fts, rank) VALUES ('crisismerge', 64)`.execute(db)
}
