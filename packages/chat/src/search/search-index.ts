import { type Kysely, sql } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'

/**
 * SQLite's search index is written once per write transaction (migration 0022): messages inserted
 * or edited wait in `chat_mess_fts_pending`, and one INSERT … SELECT adds them all to the FTS5
 * index as one segment. Runs inside the transaction that wrote them, just before its commit.
 */
export async function indexPendingMessages(trx: Kysely<ChatDatabase>): Promise<void> {
  await sql`INSERT INTO chat_mess_fts (rowid, content)
    SELECT m.timetick, m.content FROM chat_mess_fts_pending p JOIN chat_mess m ON m.timetick = p.id`.execute(trx)
  await sql`DELETE FROM chat_mess_fts_pending`.execute(trx)
}

/** How many waiting messages one start-up transaction indexes. */
const START_BATCH = 5000

/**
 * Indexes what waits from writes made outside the module (an import into the database file while
 * the module was stopped), a transaction of START_BATCH messages at a time; the module's own
 * writes never leave any. Answers how many were indexed.
 */
export async function indexLeftovers(db: Kysely<ChatDatabase>): Promise<number> {
  let indexed = 0
  for (;;) {
    const count = await db.transaction().execute(async (trx) => {
      const batch = sql`SELECT id FROM chat_mess_fts_pending ORDER BY id LIMIT ${START_BATCH}`
      await sql`INSERT INTO chat_mess_fts (rowid, content)
        SELECT m.timetick, m.content FROM chat_mess m WHERE m.timetick IN (${batch})`.execute(trx)
      const taken = await sql`DELETE FROM chat_mess_fts_pending WHERE id IN (${batch})`.execute(trx)
      return Number(taken.numAffectedRows ?? 0)
    })
    if (count === 0) return indexed
    indexed += count
  }
}
