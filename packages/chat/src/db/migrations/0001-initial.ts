import { columnType as c, type DatabaseDialect, notNullDefault as d, primaryKey } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'

// On SQLite a timetick key declared INTEGER is the rowid itself: no second index, and the FTS5
// table can point at it. Both types read back as the same number.
const rowKey = (dialect: DatabaseDialect) => (dialect === 'sqlite' ? 'integer' : c.id)

/** Chats, members, messages with search, the event feed, feedback, invites and guests. */
export async function up(db: Kysely<unknown>, dialect: DatabaseDialect): Promise<void> {
  await db.schema
    .createTable('chats')
    .addColumn('timetick', c.id, primaryKey())
    .addColumn('timetick_update', c.id, d(0))
    .addColumn('type', c.integer, d(0))
    .addColumn('name', c.text, d(''))
    .addColumn('description', c.text, d(''))
    .addColumn('owner', c.id, d(0))
    .addColumn('app_id', c.id, d(0))
    .addColumn('archived', c.bool, d(false))
    .addColumn('pair_key', c.text, d(''))
    .addColumn('last_message', c.id, d(0))
    .execute()
  await db.schema.createIndex('chats_pair_key').on('chats').column('pair_key').unique().execute()
  await db.schema.createIndex('chats_app').on('chats').columns(['app_id', 'timetick']).execute()
  await db.schema.createIndex('chats_update').on('chats').column('timetick_update').execute()

  await db.schema
    .createTable('chat_members')
    .addColumn('chat_id', c.id, d(0))
    .addColumn('member', c.id, d(0))
    .addColumn('role', c.integer, d(0))
    .addColumn('last_read', c.id, d(0))
    .addColumn('joined', c.id, d(0))
    .addColumn('timetick_update', c.id, d(0))
    .addPrimaryKeyConstraint('chat_members_pk', ['chat_id', 'member'])
    .execute()
  await db.schema.createIndex('chat_members_member').on('chat_members').columns(['member', 'chat_id']).execute()

  await db.schema
    .createTable('chat_mess')
    .addColumn('timetick', rowKey(dialect), primaryKey())
    .addColumn('timetick_update', c.id, d(0))
    .addColumn('chat_id', c.id, d(0))
    .addColumn('owner', c.id, d(0))
    .addColumn('content', c.text, d(''))
    .addColumn('file_name', c.text, d(''))
    .addColumn('file_size', c.bigInteger, d(0))
    .addColumn('flags', c.integer, d(0))
    .addColumn('linked_message_id', c.id, d(0))
    .addColumn('link_kind', c.integer, d(0))
    .addColumn('forwarded_from', c.id, d(0))
    .execute()
  await db.schema.createIndex('chat_mess_chat').on('chat_mess').columns(['chat_id', 'timetick']).execute()
  await db.schema.createIndex('chat_mess_linked').on('chat_mess').columns(['linked_message_id', 'link_kind']).execute()
  await db.schema.createIndex('chat_mess_update').on('chat_mess').column('timetick_update').execute()
  await db.schema.createIndex('chat_mess_owner').on('chat_mess').columns(['owner', 'timetick']).execute()

  await db.schema
    .createTable('chat_events')
    .addColumn('timetick', rowKey(dialect), primaryKey())
    .addColumn('tick_update', c.id, d(0))
    .addColumn('chat_id', c.id, d(0))
    .addColumn('addressee', c.id, d(0))
    .addColumn('app_id', c.id, d(0))
    .addColumn('event_type', c.text, d(''))
    .addColumn('data', c.json, d('{}'))
    .execute()
  await db.schema.createIndex('chat_events_tick').on('chat_events').column('tick_update').execute()
  await db.schema
    .createIndex('chat_events_unsequenced')
    .on('chat_events')
    .column('timetick')
    .where(sql.ref('tick_update'), '=', 0)
    .execute()

  await db.schema
    .createTable('feedback')
    .addColumn('timetick', c.id, primaryKey())
    .addColumn('timetick_update', c.id, d(0))
    .addColumn('owner', c.id, d(0))
    .addColumn('object_type', c.integer, d(0))
    .addColumn('object_id', c.text, d(''))
    .addColumn('object_owner', c.id, d(0))
    .addColumn('rating', c.integer, d(0))
    .addColumn('comment', c.text, d(''))
    .addColumn('chat_id', c.id, d(0))
    .execute()
  await db.schema.createIndex('feedback_object').on('feedback').columns(['object_type', 'object_id']).execute()
  await db.schema.createIndex('feedback_object_owner').on('feedback').column('object_owner').execute()

  await db.schema
    .createTable('invites')
    .addColumn('code', c.text, primaryKey())
    .addColumn('timetick', c.id, d(0))
    .addColumn('chat_id', c.id, d(0))
    .addColumn('kind', c.integer, d(0))
    .addColumn('created_by', c.id, d(0))
    .addColumn('revoked', c.bool, d(false))
    .execute()

  await db.schema
    .createTable('guests')
    .addColumn('timetick', c.id, primaryKey())
    .addColumn('code', c.text, d(''))
    .addColumn('device_guid', c.text, d(''))
    .addColumn('chat_id', c.id, d(0))
    .addUniqueConstraint('guests_code_device', ['code', 'device_guid'])
    .execute()

  await createSearchIndex(db, dialect)
}

// Full-text search that also finds partial words and CJK text: trigrams on both dialects.
async function createSearchIndex(db: Kysely<unknown>, dialect: DatabaseDialect) {
  if (dialect === 'postgres') {
    // The extension lives once per database, in public unless an operator put it elsewhere, so its
    // operator class is named with the schema it is really in.
    await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`.execute(db)
    const { rows } = await sql<{ schema: string }>`
      SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
      WHERE e.extname = 'pg_trgm'`.execute(db)
    const opclass = sql.id(rows[0]!.schema, 'gin_trgm_ops')
    await sql`CREATE INDEX chat_mess_content_trgm ON chat_mess USING gin (content ${opclass})`.execute(db)
    return
  }
  await sql`CREATE VIRTUAL TABLE chat_mess_fts USING fts5(content, content='chat_mess', content_rowid='timetick', tokenize='trigram')`.execute(
    db,
  )
  await sql`CREATE TRIGGER chat_mess_fts_insert AFTER INSERT ON chat_mess BEGIN
    INSERT INTO chat_mess_fts (rowid, content) VALUES (new.timetick, new.content);
  END`.execute(db)
  await sql`CREATE TRIGGER chat_mess_fts_delete AFTER DELETE ON chat_mess BEGIN
    INSERT INTO chat_mess_fts (chat_mess_fts, rowid, content) VALUES ('delete', old.timetick, old.content);
  END`.execute(db)
  await sql`CREATE TRIGGER chat_mess_fts_update AFTER UPDATE OF content ON chat_mess BEGIN
    INSERT INTO chat_mess_fts (chat_mess_fts, rowid, content) VALUES ('delete', old.timetick, old.content);
    INSERT INTO chat_mess_fts (rowid, content) VALUES (new.timetick, new.content);
  END`.execute(db)
}
