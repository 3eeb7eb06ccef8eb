import { ChatMessFlags, type DatabaseDialect } from '@atrium/platform'
import { type RawBuilder, sql } from 'kysely'

/**
 * A chat_mess row that carries a file (spec: "/ChatAdmin/UserFiles"): a non-zero size, a file name
 * or the File flag. Stated with literals, exactly as the partial indexes of migration 0018 state
 * it, so queries that use it can use those indexes on both dialects.
 */
export function isFileRow(): RawBuilder<boolean> {
  return sql<boolean>`(file_size <> 0 OR file_name <> '' OR (flags & ${sql.lit(ChatMessFlags.File)}) <> 0)`
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
export function extensionOf(dialect: DatabaseDialect): RawBuilder<string> {
  if (dialect === 'postgres') return sql<string>`lower(COALESCE(substring(file_name from '\.([^.]*)$'), ''))`
  return sql<string>`(CASE WHEN instr(file_name, '.') = 0 THEN '' ELSE lower(substr(file_name, length(rtrim(file_name, replace(file_name, '.', ''))) + 1)) END)`
}

const inList = (extensions: readonly string[]) => sql.join(extensions.map((extension) => sql.lit(extension)))

/** SQL true when the row's file name falls in the bucket, as fileTypeOf decides it. */
export function isFileType(dialect: DatabaseDialect, type: FileType): RawBuilder<boolean> {
  if (type !== 'other') return sql<boolean>`${extensionOf(dialect)} IN (${inList(FILE_EXTENSIONS[type])})`
  return sql<boolean>`${extensionOf(dialect)} NOT IN (${inList(Object.values(FILE_EXTENSIONS).flat())})`
}
