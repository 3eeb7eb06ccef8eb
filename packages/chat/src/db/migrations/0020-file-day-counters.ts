import { ChatMessFlags, columnType as c, type DatabaseDialect, notNullDefault as d } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { FILE_DAY_TICKS, fileTypeSql, isFileRow, type RowPrefix } from '../../admin/file-rows.ts'

/**
 * /ChatAdmin/FileStatistic from counters (issue 21): files and bytes per UTC day of the row's
 * timetick_update, FileType bucket and soft-deleted state, kept by triggers on chat_mess in the
 * transaction of every write (a message stored, edited, soft-deleted, restored or deleted, on every
 * path: the repositories, the PostgreSQL posting function, the operator actions), then backfilled
 * from the rows. Aggregating 30 days of file rows per request took 80–120 ms with a million
 * messages; the counters are a few hundred rows. A change to FILE_EXTENSIONS needs a migration
 * that recounts. On PostgreSQL the file-name trigram index of 0018 goes (UserFiles no longer uses
 * it) and the file indexes of 0018 carry the timetick, for UserFiles' bounded walk.
 */
export async function up(db: Kysely<unknown>, dialect: DatabaseDialect): Promise<void> {
  await db.schema
    .createTable('chat_file_days')
    .addColumn('day', c.integer, d(0))
    .addColumn('file_type', c.text, d(''))
    .addColumn('deleted', c.bool, d(0))
    .addColumn('files', c.bigInteger, d(0))
    .addColumn('bytes', c.bigInteger, d(0))
    .addPrimaryKeyConstraint('chat_file_days_pk', ['day', 'file_type', 'deleted'])
    .execute()

  const key = (of: RowPrefix) =>
    sql`${sql.raw(of)}timetick_update / ${sql.lit(FILE_DAY_TICKS)}, ${fileTypeSql(dialect, of)},
      CASE WHEN (${sql.raw(of)}flags & ${sql.lit(ChatMessFlags.Deleted)}) <> 0 THEN 1 ELSE 0 END`
  const add = sql`ON CONFLICT (day, file_type, deleted)
    DO UPDATE SET files = chat_file_days.files + excluded.files, bytes = chat_file_days.bytes + excluded.bytes`

  if (dialect === 'postgres') {
    // Statement-level triggers: one grouped upsert per statement, in key order, so a batch of
    // posts costs one write per counter and concurrent batches lock the counters in one order.
    const count = (rows: string, sign: string) => sql`
      INSERT INTO chat_file_days (day, file_type, deleted, files, bytes)
      SELECT ${key('')}, ${sql.raw(sign)}COUNT(*), ${sql.raw(sign)}SUM(file_size) FROM ${sql.raw(rows)}
      WHERE ${isFileRow()} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3 ${add};`
    await sql`CREATE FUNCTION chat_file_days_count() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN ${count('new_rows', '')}
        ELSIF TG_OP = 'DELETE' THEN ${count('old_rows', '-')}
        ELSE
          INSERT INTO chat_file_days (day, file_type, deleted, files, bytes)
          SELECT day, file_type, deleted, SUM(files), SUM(bytes) FROM (
            SELECT ${key('')}, -1, -file_size FROM old_rows WHERE ${isFileRow()}
            UNION ALL
            SELECT ${key('')}, 1, file_size FROM new_rows WHERE ${isFileRow()}
          ) AS moved (day, file_type, deleted, files, bytes)
          GROUP BY 1, 2, 3 HAVING SUM(files) <> 0 OR SUM(bytes) <> 0 ORDER BY 1, 2, 3 ${add};
        END IF;
        RETURN NULL;
      END $$`.execute(db)
    await sql`CREATE TRIGGER chat_file_days_insert AFTER INSERT ON chat_mess REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION chat_file_days_count()`.execute(db)
    await sql`CREATE TRIGGER chat_file_days_delete AFTER DELETE ON chat_mess REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION chat_file_days_count()`.execute(db)
    await sql`CREATE TRIGGER chat_file_days_update AFTER UPDATE ON chat_mess
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION chat_file_days_count()`.execute(db)
    // UserFiles now tests FileName on the file rows it walks in timetick_update order (a bounded
    // read), so nothing reads the trigram index of 0018 any more; it only cost writes.
    await sql`DROP INDEX IF EXISTS chat_mess_file_name_trgm`.execute(db)
    // That walk also needs each row's id: carried in the file indexes, it reads them alone, where
    // fetching 5,000 table rows per page took most of its time. (SQLite's indexes carry the
    // rowid, which is the timetick.)
    for (const [name, columns] of [
      ['chat_mess_files', sql`timetick_update, flags, file_size, file_name`],
      ['chat_mess_owner_files', sql`owner, timetick_update, flags, file_size, file_name`],
    ] as const) {
      await sql`DROP INDEX ${sql.id(name)}`.execute(db)
      await sql`CREATE INDEX ${sql.id(name)} ON chat_mess (${columns}) INCLUDE (timetick) WHERE ${isFileRow()}`.execute(
        db,
      )
    }
  } else {
    const count = (of: RowPrefix, sign: string) => sql`
      INSERT INTO chat_file_days (day, file_type, deleted, files, bytes)
      SELECT ${key(of)}, ${sql.raw(sign)}1, ${sql.raw(sign)}${sql.raw(of)}file_size WHERE ${isFileRow(of)} ${add};`
    await sql`CREATE TRIGGER chat_file_days_insert AFTER INSERT ON chat_mess WHEN ${isFileRow('NEW.')}
      BEGIN ${count('NEW.', '')} END`.execute(db)
    await sql`CREATE TRIGGER chat_file_days_delete AFTER DELETE ON chat_mess WHEN ${isFileRow('OLD.')}
      BEGIN ${count('OLD.', '-')} END`.execute(db)
    // Only changes that can move a row between counters: its day, flags, name or size.
    await sql`CREATE TRIGGER chat_file_days_update AFTER UPDATE OF timetick_update, flags, file_name, file_size
      ON chat_mess WHEN (${isFileRow('OLD.')} OR ${isFileRow('NEW.')})
      BEGIN ${count('OLD.', '-')} ${count('NEW.', '')} END`.execute(db)
  }

  await sql`INSERT INTO chat_file_days (day, file_type, deleted, files, bytes)
    SELECT ${key('')}, COUNT(*), SUM(file_size) FROM chat_mess WHERE ${isFileRow()} GROUP BY 1, 2, 3`.execute(db)
}
