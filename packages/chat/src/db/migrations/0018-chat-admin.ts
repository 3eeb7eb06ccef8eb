import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { isFileRow } from '../../admin/file-rows.ts'
import { isCallRow } from '../../calls/calls.repository.ts'

/**
 * The operator pages (/ChatAdmin/, issue 21): the audit of operator actions, and the indexes the
 * pages' lists walk newest first so each page reads only the rows it shows, also with a million
 * messages. The file and call predicates are stated exactly as the queries state them (literals),
 * so both planners match the partial indexes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
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

  // UserFiles and FileStatistic: file rows by their last change, of everyone or of one owner.
  await sql`CREATE INDEX chat_mess_files ON chat_mess (timetick_update) WHERE ${isFileRow()}`.execute(db)
  await sql`CREATE INDEX chat_mess_owner_files ON chat_mess (owner, timetick_update) WHERE ${isFileRow()}`.execute(db)
  // Calls: every call row newest first (the call history's index is per chat).
  await sql`CREATE INDEX chat_mess_all_calls ON chat_mess (timetick) WHERE ${isCallRow()}`.execute(db)
  // Chats: newest first by kind (the Flags filter).
  await db.schema.createIndex('chats_type').on('chats').columns(['type', 'timetick']).execute()
  // Feedback: newest first by rated kind.
  await db.schema.createIndex('feedback_type_time').on('feedback').columns(['object_type', 'timetick']).execute()
}
