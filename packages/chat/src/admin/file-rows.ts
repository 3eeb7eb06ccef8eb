import { ChatMessFlags, type DatabaseDialect } from '@atrium/platform'
import { type RawBuilder, sql } from 'kysely'

/**
 * Ticks in a UTC day: a timetick's high bits are milliseconds since 2020-01-01 (a UTC midnight),
 * so `timetick / FILE_DAY_TICKS` is the UTC day, counted from that date.
 */
export const FILE_DAY_TICKS = 86_400_000 * 4096

/** Which row a trigger's expression reads (`NEW.`, `OLD.`), or the table's own columns (''). */
export type RowPrefix = '' | 'NEW.' | 'OLD.'

/**
 * A chat_mess row that carries a file (spec: "/ChatAdmin/UserFiles"): a non-zero size, a file name
 * or the File flag. Stated with literals, exactly as the partial indexes of migration 0018 state
 * it, so queries that use it can use those indexes on both dialects.
 */
export function isFileRow(of: RowPrefix = ''): RawBuilder<boolean> {
  const row = sql.raw(of)
  return sql<boolean>`(${row}file_size <> 0 OR ${row}file_name <> '' OR (${row}flags & ${sql.lit(ChatMessFlags.File)}) <> 0)`
}

/** The FileType buckets of UserFiles and FileStatistic, by file name extension. */
export const FILE_TYPES = ['image', 'doc', 'video', 'audio', 'archive', 'other'] as const
export type FileType = (typeof FILE_TYPES)[number]

/** Lower-case extensions of each bucket but `other`, which is every name with none of them. */
export const FILE_EXTENSIONS: Record<Exclude<FileType, 'other'>, readonly string[]> = {
  image: ['jpg', 'jpeg', 'png', 'gif', 'webp', 'bmp', 'svg', 'heic', 'heif', 'avif', 'tif', 'tiff', 'ico'],
  doc: ['pdf', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'rtf', 'txt', 'csv', 'md', 'epub'],
  video: ['mp4', 'mov', 'avi', 'mkv', 'webm', 'm4v', 'mpeg', 'mpg', '3gp', 'wmv'],
  audio: ['mp3', 'wav', 'ogg', 'oga', 'opus', 'm4a', 'aac', 'flac', 'weba', 'wma'],
  archive: ['zip', 'rar', '7z', 'tar', 'gz', 'tgz', 'bz2', 'xz', 'zst'],
}

/** The bucket of a file name: its extension (after the last dot, any case) looked up in FILE_EXTENSIONS. */
export function fileTypeOf(fileName: string): FileType {
  const dot = fileName.lastIndexOf('.')
  return fileTypeOfExtension(dot < 0 ? '' : fileName.slice(dot + 1).toLowerCase())
}

/** The bucket of a lower-case extension. */
export function fileTypeOfExtension(extension: string): FileType {
  for (const [type, extensions] of Object.entries(FILE_EXTENSIONS)) {
    if (extensions.includes(extension)) return type as FileType
  }
  return 'other'
}

/**
 * SQL of file_name's extension in lower case, as fileTypeOf reads it: the text after the last dot,
 * '' for a name without one. SQLite has no "last index of": rtrim with every character of the name
 * but dots strips the name back to its last dot.
 */
export function extensionOf(dialect: DatabaseDialect, of: RowPrefix = ''): RawBuilder<string> {
  const name = sql.raw(`${of}file_name`)
  if (dialect === 'postgres') return sql<string>`lower(COALESCE(substring(${name} from '\.([^.]*)$'), ''))`
  return sql<string>`(CASE WHEN instr(${name}, '.') = 0 THEN '' ELSE lower(substr(${name}, length(rtrim(${name}, replace(${name}, '.', ''))) + 1)) END)`
}

const inList = (extensions: readonly string[]) => sql.join(extensions.map((extension) => sql.lit(extension)))

/** SQL true when the row's file name falls in the bucket, as fileTypeOf decides it. */
export function isFileType(dialect: DatabaseDialect, type: FileType): RawBuilder<boolean> {
  if (type !== 'other') return sql<boolean>`${extensionOf(dialect)} IN (${inList(FILE_EXTENSIONS[type])})`
  return sql<boolean>`${extensionOf(dialect)} NOT IN (${inList(Object.values(FILE_EXTENSIONS).flat())})`
}

/** SQL of the row's FileType bucket by name, as fileTypeOf decides it (the file counters of migration 0020). */
export function fileTypeSql(dialect: DatabaseDialect, of: RowPrefix = ''): RawBuilder<string> {
  const extension = extensionOf(dialect, of)
  const cases = Object.entries(FILE_EXTENSIONS).map(
    ([type, extensions]) => sql`WHEN ${extension} IN (${inList(extensions)}) THEN ${sql.lit(type)}`,
  )
  return sql<string>`(CASE ${sql.join(cases, sql` `)} ELSE 'other' END)`
}
