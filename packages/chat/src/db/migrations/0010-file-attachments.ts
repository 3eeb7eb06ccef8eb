import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'

/**
 * Attachments (issue 15): a file message names the gateway's file by `file_id` (the upload's id)
 * beside `file_name` and `file_size`, and keeps the content type its uploader declared. Forwards
 * share the file, so a file is looked up by id across messages. `file_releases` queues the files
 * of hard-deleted messages until the gateway has removed the bytes of those no message names.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chat_mess').addColumn('file_id', c.id, d(0)).execute()
  await db.schema.alterTable('chat_mess').addColumn('file_type', c.text, d('')).execute()
  await sql`CREATE INDEX chat_mess_file ON chat_mess (file_id) WHERE file_id <> 0`.execute(db)
  await db.schema
    .createTable('file_releases')
    .addColumn('timetick', c.id, primaryKey())
    .addColumn('file_id', c.id, d(0))
    .execute()
}
