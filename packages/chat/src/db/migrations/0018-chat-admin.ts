import { columnType as c, type DatabaseDialect, notNullDefault as d, primaryKey } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { isFileRow } from '../../admin/file-rows.ts'
import { isCallRow } from '../../calls/calls.repository.ts'

/**
 * The operator pages (/ChatAdmin/, issue 21): the audit of operator actions, and the indexes the
 * pages' lists walk newest first so each page reads only the rows it shows, also with a million
 * messages. The file and call predicates are stated exactly as the queries state them (literals),
 * so both planners match the partial indexes.
 */
export async function up(db: Kysely<unknown>, dialect: DatabaseDialect): Promise<void> {
  await db.schema
    .createTable('admin_actions')
    .addColumn('timetick', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('action', c.text, d(''))
    .addColumn('target', c.text, d(''))
    .addColumn('detail', c.text, d(''))
    .addColumn('at', c.bigInteger, d(0))
    .addColumn('outcome', c.text, d(''))
    .execute()
  await db.schema.createIndex('admin_actions_crm').on('admin_actions').columns(['crm_id', 'timetick']).execute()

  // UserFiles and FileStatistic: file rows by their last change, of everyone or of one owner. The
  // filtered columns ride along, so filters and the per-day statistic read the index alone (at
  // 100k messages the 30-day statistic went from 15 ms to 2 ms on SQLite); files are a small share.
  await sql`CREATE INDEX chat_mess_files ON chat_mess (timetick_update, flags, file_size, file_name)
    WHERE ${isFileRow()}`.execute(db)
  await sql`CREATE INDEX chat_mess_owner_files ON chat_mess (owner, timetick_update, flags, file_size, file_name)
    WHERE ${isFileRow()}`.execute(db)
  if (dialect === 'postgres') {
    // UserFiles' FileName (a substring, LIKE '%…%' on PostgreSQL): trigrams, as the message search
    // uses (0001), else the planner reads the whole table for a name few files have.
    const { rows } = await sql<{ schema: string }>`
      SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
      WHERE e.extname = 'pg_trgm'`.execute(db)
    const opclass = sql.id(rows[0]!.schema, 'gin_trgm_ops')
    await sql`CREATE INDEX chat_mess_file_name_trgm ON chat_mess USING gin (file_name ${opclass}) WHERE ${isFileRow()}`.execute(
      db,
    )
  }
  // Calls: every call row newest first (the call history's index is per chat).
  await sql`CREATE INDEX chat_mess_all_calls ON chat_mess (timetick) WHERE ${isCallRow()}`.execute(db)
  // Chats: newest first by kind or archived (the Flags filter), and the dashboard's counts by kind.
  await db.schema.createIndex('chats_type').on('chats').columns(['type', 'timetick']).execute()
  await sql`CREATE INDEX chats_archived ON chats (timetick) WHERE archived = 1`.execute(db)
  await db.schema.createIndex('chats_counts').on('chats').columns(['type', 'archived']).execute()
  // Feedback: newest first by rated kind.
  await db.schema.createIndex('feedback_type_time').on('feedback').columns(['object_type', 'timetick']).execute()
}
