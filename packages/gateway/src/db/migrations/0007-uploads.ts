import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/** Resumable uploads (tus): one row per upload, its offset committed after each verified chunk. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('uploads')
    .addColumn('id', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('upload_length', c.bigInteger, d(0))
    .addColumn('upload_offset', c.bigInteger, d(0))
    .addColumn('metadata', c.text, d(''))
    .addColumn('file_name', c.text, d(''))
    .addColumn('content_type', c.text, d(''))
    .addColumn('storage_key', c.text, d(''))
    .addColumn('state', c.text, d('uploading'))
    .addColumn('expires', c.time, d(0))
    .addColumn('created', c.time, d(0))
    .addColumn('updated', c.time, d(0))
    .execute()
  await db.schema.createIndex('uploads_user').on('uploads').column('crm_id').execute()
  await db.schema.createIndex('uploads_expiry').on('uploads').columns(['state', 'expires']).execute()
}
