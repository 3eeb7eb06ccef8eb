import assert from 'node:assert/strict'
import { test } from 'node:test'
import { migrateToLatest } from '@atrium/platform'
import { openTestDatabase } from '@atrium/platform/testing'
import { sql } from 'kysely'
import { chatMigrations } from '../db/migrations/index.ts'
import type { ChatDatabase } from '../db/schema.ts'

test('SQLite: the search index merges a little at every write and stays whole across many small commits', async (t) => {
  const database = await openTestDatabase<ChatDatabase>(t, 'sqlite')
  await migrateToLatest(database, chatMigrations)
  const { db } = database
  const config = await sql<{ k: string; v: number }>`SELECT k, v FROM chat_mess_fts_config`.execute(db)
  const settings = Object.fromEntries(config.rows.map((row) => [row.k, Number(row.v)]))
  assert.equal(settings.automerge, 16)
  assert.equal(settings.crisismerge, 64)

  // One commit per message: each adds a segment, so levels fill and incremental merges run.
  const count = 400
  for (let i = 1; i <= count; i++) {
    const content = `note ${i} about invoice ${i % 7}`
    // Every other column keeps its default.
    await sql`INSERT INTO chat_mess (timetick, timetick_update, chat_id, owner, content) VALUES (${i}, ${i}, 1, 1, ${content})`.execute(
      db,
    )
  }
  await sql`INSERT INTO chat_mess_fts (chat_mess_fts, rank) VALUES ('integrity-check', 1)`.execute(db)
  const found = await sql<{
    n: number
  }>`SELECT count(*) AS n FROM chat_mess_fts WHERE chat_mess_fts MATCH '"invoice 3"'`.execute(db)
  assert.equal(Number(found.rows[0]!.n), Math.floor((count - 3) / 7) + 1)
})
