/** What a file is, for its icon and whether the client shows it as an image. */
export type FileKind = 'image' | 'video' | 'audio' | 'pdf' | 'text' | 'archive' | 'document' | 'file'

/**
 * Raster image types a browser draws in <img>; the gateway serves them inline. SVG is left out: it
 * is always served as an attachment (it can carry script), so it gets a card like any document.
 */
const SHOWN_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp'])

const ARCHIVES =
  /^application\/(zip|x-zip-compressed|gzip|x-gzip|x-tar|x-7z-compressed|x-rar-compressed|vnd\.rar|x-bzip2|x-xz|zstd)$/
const DOCUMENTS =
  /^application\/(msword|rtf|vnd\.openxmlformats-officedocument\..+|vnd\.oasis\.opendocument\..+|vnd\.ms-.+)$/

const EXTENSIONS: Record<string, FileKind> = {
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  gif: 'image',
  webp: 'image',
  pdf: 'pdf',
  txt: 'text',
  md: 'text',
  csv: 'text',
  zip: 'archive',
  gz: 'archive',
  tar: 'archive',
  '7z': 'archive',
  doc: 'document',
  docx: 'document',
  odt: 'document',
  xls: 'document',
  xlsx: 'document',
  ppt: 'document',
  pptx: 'document',
  mp3: 'audio',
  wav: 'audio',
  ogg: 'audio',
  mp4: 'video',
  webm: 'video',
  mov: 'video',
}

/** The kind of a file by its declared content type, or by its name's extension when the type says nothing. */
export function fileKind(type: string, name = ''): FileKind {
  const mime = type.toLowerCase().split(';')[0]!.trim()
  if (SHOWN_IMAGES.has(mime)) return 'image'
  if (mime.startsWith('image/')) return 'file'
  if (mime.startsWith('video/')) return 'video'
  if (mime.startsWith('audio/')) return 'audio'
  if (mime === 'application/pdf') return 'pdf'
  if (mime.startsWith('text/') && mime !== 'text/html') return 'text'
  if (ARCHIVES.test(mime)) return 'archive'
  if (DOCUMENTS.test(mime)) return 'document'
  if (mime && mime !== 'application/octet-stream') return 'file'
  const extension = /\.([a-z0-9]{1,5})$/i.exec(name)?.[1]?.toLowerCase() ?? ''
  const byName = EXTENSIONS[extension] ?? 'file'
  // An image known only by its name may be anything: show it as a card, not an <img>.
  return byName === 'image' ? 'file' : byName
}

const ICONS: Record<FileKind, string> = {
  image: '🖼️',
  video: '🎬',
  audio: '🎵',
  pdf: '📕',
  text: '📄',
  archive: '🗜️',
  document: '📝',
  file: '📎',
}

const LABELS: Record<FileKind, string> = {
  image: 'Image',
  video: 'Video',
  audio: 'Audio',
  pdf: 'PDF document',
  text: 'Text file',
  archive: 'Archive',
  document: 'Document',
  file: 'File',
}

/** The icon of a kind (decorative; `fileKindLabel` says it in words). */
export const fileKindIcon = (kind: FileKind) => ICONS[kind]

/** The kind in words, for screen readers and titles. */
export const fileKindLabel = (kind: FileKind) => LABELS[kind]
