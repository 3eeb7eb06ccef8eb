import { ChatMessFlags, type DatabaseDialect } from '@atrium/platform'
import { type Kysely, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'
import type { MessageRow } from '../messages/messages.repository.ts'
import { extensionOf, FILE_DAY_TICKS, type FileType, fileTypeOfExtension, isFileRow, isFileType } from './file-rows.ts'

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

/** The filters of /ChatAdmin/FileStatistic: those its counters (or one owner's rows) answer. */
export type FileStatisticFilter = Pick<
  UserFilesFilter,
  'ownerId' | 'fileType' | 'updatedMin' | 'updatedBelow' | 'showDeleted'
>

/** One page of UserFiles, and where its bounded read stopped when it stopped short of a full page. */
export interface UserFilesPage {
  rows: MessageRow[]
  /**
   * Set when the read gave up before the page was full: the timetick_update of the last file row
   * it read; older rows were not looked at (a FromTick cursor continues from there).
   */
  searchedTo?: number
}

/** Files and bytes of one FileType bucket on one UTC day. */
export interface FileDayBucket {
  /** Days since 2020-01-01 (the timetick epoch). */
  day: number
  fileType: FileType
  files: number
  bytes: number
}

/**
 * How many file rows one UserFiles page reads past its cursor at most (issue 21: a filter that
 * matches almost nothing read most of the ~120,000 file rows of a million messages, 208 ms).
 */
export const FILE_READ_BUDGET = 5000

type Files = SelectQueryBuilder<ChatDatabase, 'chat_mess', object>

/** The SQL of the operator's file lists over chat_mess (the file indexes of migration 0018) and the counters of 0020. */
export function createUserFilesRepository(
  db: Kysely<ChatDatabase>,
  dialect: DatabaseDialect,
  budget = FILE_READ_BUDGET,
) {
  // One substring test on both dialects, case-sensitive: instr on SQLite (its LIKE ignores case),
  // strpos on PostgreSQL.
  const contains = (needle: string) =>
    dialect === 'postgres'
      ? sql<boolean>`strpos(file_name, ${needle}) > 0`
      : sql<boolean>`instr(file_name, ${needle}) > 0`
  const notDeleted = sql<boolean>`(flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0`

  /** File rows in an index's order: of one owner or everyone, one message, a time range, below a cursor. */
  function walked(filter: Omit<UserFilesFilter, 'limit'>): Files {
    let query: Files = db.selectFrom('chat_mess').where(isFileRow())
    if (filter.ownerId !== undefined) query = query.where('owner', '=', filter.ownerId)
    if (filter.timetick !== undefined) query = query.where('timetick', '=', filter.timetick)
    if (filter.updatedMin !== undefined) query = query.where('timetick_update', '>=', filter.updatedMin)
    if (filter.updatedBelow !== undefined) query = query.where('timetick_update', '<', filter.updatedBelow)
    if (filter.fromTick !== undefined) query = query.where('timetick_update', '<', filter.fromTick)
    return query
  }

  /** The filters tested on each row walked, from the columns the file indexes carry. */
  function tested(filter: Omit<UserFilesFilter, 'limit'>): RawBuilder<boolean>[] {
    const tests: RawBuilder<boolean>[] = []
    if (!filter.showDeleted) tests.push(notDeleted)
    if (filter.fileName) tests.push(contains(filter.fileName))
    if (filter.fileType) tests.push(isFileType(dialect, filter.fileType))
    if (filter.minSize !== undefined) tests.push(sql<boolean>`file_size >= ${filter.minSize}`)
    if (filter.maxSize !== undefined) tests.push(sql<boolean>`file_size <= ${filter.maxSize}`)
    return tests
  }

  return {
    /**
     * One page of file rows, by timetick_update newest first. It walks at most `budget` file rows
     * past the cursor (or the page's size, when larger): a filter few rows match stops there with
     * `searchedTo` instead of reading every file row.
     */
    async list(filter: UserFilesFilter): Promise<UserFilesPage> {
      const tests = tested(filter)
      if (tests.length === 0) {
        const rows = await walked(filter).selectAll().orderBy('timetick_update', 'desc').limit(filter.limit).execute()
        return { rows }
      }
      const reach = Math.max(budget, filter.limit)
      const window = walked(filter)
        .select(['timetick', 'timetick_update', 'flags', 'file_size', 'file_name'])
        .orderBy('timetick_update', 'desc')
        .limit(reach)
      const matched = db
        .selectFrom(window.as('walked'))
        .select('timetick')
        .where(sql<boolean>`${sql.join(tests, sql` AND `)}`)
        .orderBy('timetick_update', 'desc')
        .limit(filter.limit)
      const rows = await db
        .selectFrom('chat_mess')
        .selectAll()
        .where('timetick', 'in', matched)
        .orderBy('timetick_update', 'desc')
        .execute()
      if (rows.length === filter.limit) return { rows }
      // Short of a page: did the walk reach its last row? That row, if it exists, is where it stopped.
      const last = await walked(filter)
        .select('timetick_update')
        .orderBy('timetick_update', 'desc')
        .limit(1)
        .offset(reach - 1)
        .executeTakeFirst()
      return last ? { rows, searchedTo: Number(last.timetick_update) } : { rows }
    },

    /**
     * Files and bytes per FileType bucket per UTC day of timetick_update, newest day first: from
     * the day counters of migration 0020, or with `ownerId` from that owner's file rows. The
     * counters know whole days, so tick bounds are widened to the days they fall in.
     */
    async statistic(filter: FileStatisticFilter): Promise<FileDayBucket[]> {
      if (filter.ownerId !== undefined) return ownerStatistic(filter)
      let query = db
        .selectFrom('chat_file_days')
        .select(['day', 'file_type', sql<number>`SUM(files)`.as('files'), sql<number>`SUM(bytes)`.as('bytes')])
      if (!filter.showDeleted) query = query.where('deleted', '=', 0)
      if (filter.fileType) query = query.where('file_type', '=', filter.fileType)
      if (filter.updatedMin !== undefined)
        query = query.where('day', '>=', Math.floor(filter.updatedMin / FILE_DAY_TICKS))
      if (filter.updatedBelow !== undefined) {
        query = query.where('day', '<=', Math.floor((filter.updatedBelow - 1) / FILE_DAY_TICKS))
      }
      const rows = await query
        .groupBy(['day', 'file_type'])
        .having(sql<boolean>`SUM(files) <> 0`)
        .orderBy('day', 'desc')
        .orderBy('file_type')
        .execute()
      return rows.map((row) => ({
        day: Number(row.day),
        fileType: row.file_type as FileType,
        files: Number(row.files),
        bytes: Number(row.bytes),
      }))
    },
  }

  async function ownerStatistic(filter: FileStatisticFilter): Promise<FileDayBucket[]> {
    // Integer division on both dialects (both columns are integers). Grouped by extension, read
    // once per row, and bucketed here: cheaper than testing each row against every bucket.
    let query = walked(filter)
    for (const test of tested(filter)) query = query.where(test)
    const rows = await query
      .select([
        sql<number>`(timetick_update / ${sql.lit(FILE_DAY_TICKS)})`.as('day'),
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
  }
}

export type UserFilesRepository = ReturnType<typeof createUserFilesRepository>

/** The epoch ms of the UTC midnight that begins a `day` of FileDayBucket. */
export function dayStart(day: number): number {
  return Date.UTC(2020, 0, 1) + day * 86_400_000
}
