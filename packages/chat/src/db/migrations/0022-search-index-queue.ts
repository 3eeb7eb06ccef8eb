import type { DatabaseDialect } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'

/**
 * SQLite: new and edited messages wait in `chat_mess_fts_pending` and enter the search index once
 * per write transaction (search/search-index.ts), instead of by a trigger per row. SQLite opens a
 * statement savepoint for every statement that fires a trigger, and FTS5 writes its pending terms
 * out as a new segment at every savepoint, so each message became a segment of its own: 16 sends
 * sharing one commit made 16 segments, and merging them cost more than everything else the sends
 * wrote (issue 22: 5.2 ms of a 6.9 ms commit). One INSERT … SELECT per commit makes one segment.
 * The delete and update triggers keep working on indexed rows; a row still waiting is simply taken
 * off the queue (deleted) or left on it (edited: the queue reads the row's content when it runs).
 */
export async function up(db: Kysely<unknown>, dialect: DatabaseDialect): Promise<void> {
  if (dialect !== 'sqlite') return
  await sql`CREATE TABLE chat_mess_fts_pending (id INTEGER PRIMARY KEY)`.execute(db)
  for (const name of ['chat_mess_fts_insert', 'chat_mess_fts_delete', 'chat_mess_fts_update']) {
    await sql`DROP TRIGGER ${sql.id(name)}`.execute(db)
  }
  const indexed = (id: string) => sql.raw(`NOT EXISTS (SELECT 1 FROM chat_mess_fts_pending WHERE id = ${id})`)
  await sql`CREATE TRIGGER chat_mess_fts_insert AFTER INSERT ON chat_mess BEGIN
    INSERT INTO chat_mess_fts_pending (id) VALUES (new.timetick);
  END`.execute(db)
  await sql`CREATE TRIGGER chat_mess_fts_delete AFTER DELETE ON chat_mess BEGIN
    INSERT INTO chat_mess_fts (chat_mess_fts, rowid, content)
      SELECT 'delete', old.timetick, old.content WHERE ${indexed('old.timetick')};
    DELETE FROM chat_mess_fts_pending WHERE id = old.timetick;
  END`.execute(db)
  await sql`CREATE TRIGGER chat_mess_fts_update AFTER UPDATE OF content ON chat_mess BEGIN
    INSERT INTO chat_mess_fts (chat_mess_fts, rowid, content)
      SELECT 'delete', old.timetick, old.content WHERE ${indexed('old.timetick')};
    INSERT OR IGNORE INTO chat_mess_fts_pending (id) VALUES (new.timetick);
  END`.execute(db)
}
