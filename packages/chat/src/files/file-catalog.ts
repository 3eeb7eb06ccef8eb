import { ChatMessFlags } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'

/** A file as a download sees it: what the message says about it and where it was shared. */
export interface FileRecord {
  file_id: number
  message_id: number
  chat_id: number
  file_name: string
  file_size: number
  file_type: string
}

/** Who asks for a file: a chat member (a user or a guest), or an operator, who sees every chat. */
export type FileReader = { member: number } | { operator: true }

/** Which file: by its id (any message that carries it), or by the id of one message. */
export type FileSelector = { fileId: number } | { messageId: number }

/**
 * The chat module's side of the file service (docs/files.md): file metadata lives on the message
 * rows, so whether someone may read a file, and whether any message still names it, is answered
 * here, for the gateway, which holds the bytes.
 */
export function createFileCatalog(db: Kysely<ChatDatabase>) {
  return {
    /**
     * The file as `reader` may see it: on a message with the File flag that is not deleted (an
     * operator also sees soft-deleted ones), in a chat the member belongs to. Undefined otherwise,
     * whatever the reason, so that ids cannot be probed.
     */
    async find(selector: FileSelector, reader: FileReader): Promise<FileRecord | undefined> {
      let query = db
        .selectFrom('chat_mess')
        .select(['file_id', 'timetick as message_id', 'chat_id', 'file_name', 'file_size', 'file_type'])
        .where(sql<boolean>`(flags & ${sql.lit(ChatMessFlags.File)}) <> 0`)
        .where('file_id', '<>', 0)
      query =
        'fileId' in selector
          ? query.where('file_id', '=', selector.fileId)
          : query.where('timetick', '=', selector.messageId)
      if ('member' in reader) {
        query = query.where(sql<boolean>`(flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0`).where(
          sql<boolean>`exists (select 1 from chat_members where chat_members.chat_id = chat_mess.chat_id
              and chat_members.member = ${reader.member})`,
        )
      }
      return query.orderBy('timetick', 'desc').limit(1).executeTakeFirst()
    },

    /** Those of `fileIds` that some message (deleted softly or not) still names. */
    async referenced(fileIds: number[]): Promise<number[]> {
      if (fileIds.length === 0) return []
      const rows = await db
        .selectFrom('chat_mess')
        .select('file_id')
        .distinct()
        .where('file_id', 'in', fileIds)
        .execute()
      return rows.map((row) => row.file_id)
    },

    /** The oldest queued releases, at most `limit`. */
    async releases(limit: number): Promise<{ timetick: number; file_id: number }[]> {
      return db.selectFrom('file_releases').select(['timetick', 'file_id']).orderBy('timetick').limit(limit).execute()
    },

    /** Drops releases the gateway has handled. */
    async acknowledge(ids: number[]): Promise<void> {
      if (ids.length > 0) await db.deleteFrom('file_releases').where('timetick', 'in', ids).execute()
    },
  }
}

export type FileCatalog = ReturnType<typeof createFileCatalog>
