import { ChatMessFlags } from '@atrium/platform'
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
  const extension = dot < 0 ? '' : fileName.slice(dot + 1).toLowerCase()
  for (const [type, extensions] of Object.entries(FILE_EXTENSIONS)) {
    if (extensions.includes(extension)) return type as FileType
  }
  return 'other'
}

/** SQL true when file_name's extension is one of `extensions`, in any case. */
function hasExtension(extensions: readonly string[]): RawBuilder<boolean> {
  return sql<boolean>`(${sql.join(
    extensions.map((extension) => sql`lower(file_name) LIKE ${`%.${extension}`}`),
    sql` OR `,
  )})`
}

/** SQL true when the row's file name falls in the bucket, as fileTypeOf decides it. */
export function isFileType(type: FileType): RawBuilder<boolean> {
  if (type !== 'other') return hasExtension(FILE_EXTENSIONS[type])
  return sql<boolean>`NOT ${hasExtension(Object.values(FILE_EXTENSIONS).flat())}`
}

/** SQL naming the bucket of each row, as fileTypeOf decides it. */
export function fileTypeCase(): RawBuilder<FileType> {
  const cases = Object.entries(FILE_EXTENSIONS).map(
    ([type, extensions]) => sql`WHEN ${hasExtension(extensions)} THEN ${sql.lit(type)}`,
  )
  return sql<FileType>`CASE ${sql.join(cases, sql` `)} ELSE 'other' END`
}
