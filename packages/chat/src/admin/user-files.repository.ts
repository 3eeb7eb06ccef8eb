import { ChatMessFlags, type DatabaseDialect } from '@atrium/platform'
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'
import type { MessageRow } from '../messages/messages.repository.ts'
import { extensionOf, type FileType, fileTypeOfExtension, isFileRow, isFileType } from './file-rows.ts'

/** The filters of /ChatAdmin/UserFiles (spec: "Chat admin pages"), already parsed. */
export interface UserFilesFilter {
  ownerId?: number
  /** Substring of file_name, case-sensitive. */
  fileName?: string
  fileType?: FileType
  minSize?: number
  maxSize?: number
  /** Tick bounds on timetick_update: at or after `updatedMin`, before `updatedBelow`. */
  updatedMin?: number
  updatedBelow?: number
  timetick?: number
  /** Cursor: rows whose timetick_update is below it. */
  fromTick?: number
  showDeleted: boolean
  limit: number
}

/** Files and bytes of one FileType bucket on one UTC day. */
export interface FileDayBucket {
  /** Days since 2020-01-01 (the timetick epoch). */
  day: number
  fileType: FileType
  files: number
  bytes: number
}

// A timetick's high bits are milliseconds since 2020-01-01 (a UTC midnight), so whole days of
// ticks are whole UTC days.
const TICKS_PER_DAY = 86_400_000 * 4096

type Files = SelectQueryBuilder<ChatDatabase, 'chat_mess', object>

/** The SQL of the operator's file lists over chat_mess, walking the file indexes of migration 0018. */
export function createUserFilesRepository(db: Kysely<ChatDatabase>, dialect: DatabaseDialect) {
  // One substring test on both dialects, case-sensitive: instr on SQLite (its LIKE ignores case),
  // LIKE on PostgreSQL, where the trigram index of migration 0018 serves it.
  const contains = (needle: string) =>
    dialect === 'postgres'
      ? sql<boolean>`file_name LIKE ${`%${needle.replace(/[\\%_]/g, (char) => `\\${char}`)}%`}`
      : sql<boolean>`instr(file_name, ${needle}) > 0`

  function filtered(filter: Omit<UserFilesFilter, 'limit' | 'fromTick'>): Files {
    let query: Files = db.selectFrom('chat_mess').where(isFileRow())
    if (!filter.showDeleted) query = query.where(sql<boolean>`(flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0`)
    if (filter.ownerId !== undefined) query = query.where('owner', '=', filter.ownerId)
    if (filter.timetick !== undefined) query = query.where('timetick', '=', filter.timetick)
    if (filter.fileName) query = query.where(contains(filter.fileName))
    if (filter.fileType) query = query.where(isFileType(dialect, filter.fileType))
    if (filter.minSize !== undefined) query = query.where('file_size', '>=', filter.minSize)
    if (filter.maxSize !== undefined) query = query.where('file_size', '<=', filter.maxSize)
    if (filter.updatedMin !== undefined) query = query.where('timetick_update', '>=', filter.updatedMin)
    if (filter.updatedBelow !== undefined) query = query.where('timetick_update', '<', filter.updatedBelow)
    return query
  }

  return {
    /** One page of file rows, by timetick_update newest first. */
    async list(filter: UserFilesFilter): Promise<MessageRow[]> {
      let query = filtered(filter)
      if (filter.fromTick !== undefined) query = query.where('timetick_update', '<', filter.fromTick)
      return query.selectAll().orderBy('timetick_update', 'desc').limit(filter.limit).execute()
    },

    /** Files and bytes per FileType bucket per UTC day of timetick_update, newest day first. */
    async statistic(filter: Omit<UserFilesFilter, 'limit' | 'fromTick'>): Promise<FileDayBucket[]> {
      // Integer division on both dialects (both columns are integers). Grouped by extension, read
      // once per row, and bucketed here: cheaper than testing each row against every bucket.
      const rows = await filtered(filter)
        .select([
          sql<number>`(timetick_update / ${sql.lit(TICKS_PER_DAY)})`.as('day'),
          extensionOf(dialect).as('extension'),
          sql<number>`COUNT(*)`.as('files'),
          sql<number>`COALESCE(SUM(file_size), 0)`.as('bytes'),
        ])
        .groupBy([sql`1`, sql`2`])
        .execute()
      const buckets = new Map<string, FileDayBucket>()
      for (const row of rows) {
        const day = Number(row.day)
        const fileType = fileTypeOfExtension(row.extension)
        const key = `${day}:${fileType}`
        const bucket = buckets.get(key) ?? { day, fileType, files: 0, bytes: 0 }
        bucket.files += Number(row.files)
        bucket.bytes += Number(row.bytes)
        buckets.set(key, bucket)
      }
      return [...buckets.values()].sort((a, b) => b.day - a.day || a.fileType.localeCompare(b.fileType))
    },
  }
}

export type UserFilesRepository = ReturnType<typeof createUserFilesRepository>

/** The epoch ms of the UTC midnight that begins a `day` of FileDayBucket. */
export function dayStart(day: number): number {
  return Date.UTC(2020, 0, 1) + day * 86_400_000
}
