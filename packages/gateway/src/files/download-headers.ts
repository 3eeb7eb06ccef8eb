/**
 * Content types a browser may show on the gateway's origin: pictures, sound, video and plain text,
 * which run no script. Everything else is sent as an attachment, HTML and SVG above all (docs/files.md).
 */
const INLINE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'audio/mpeg',
  'audio/ogg',
  'audio/wav',
  'audio/webm',
  'audio/mp4',
  'audio/aac',
  'audio/flac',
  'video/mp4',
  'video/webm',
  'video/ogg',
  'text/plain',
])

const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]{1,64}\/[a-z0-9!#$&^_.+-]{1,64}$/

/** The Content-Type a file is served with: its declared type when well-formed, else octet-stream. */
export function servedType(declared: string): string {
  const type = declared.trim().toLowerCase()
  return MEDIA_TYPE.test(type) ? type : 'application/octet-stream'
}

/** True when a file of this served type may be shown inline. */
export function isInlineType(type: string): boolean {
  return INLINE_TYPES.has(type)
}

/**
 * A Content-Disposition header (RFC 6266) for `name`: an ASCII `filename` for old clients, with
 * quotes, backslashes, controls and path separators replaced, and the exact name in `filename*`
 * (RFC 8187, UTF-8, percent-encoded). A name that is empty after cleaning becomes `file`.
 */
export function contentDisposition(disposition: 'inline' | 'attachment', name: string): string {
  // Path separators and controls never belong in a saved file's name; the rest is the uploader's.
  const unsafe = (char: string) => char < ' ' || char === '\u007f' || char === '/' || char === '\\'
  const cleaned =
    [...name]
      .map((char) => (unsafe(char) ? '_' : char))
      .join('')
      .trim() || 'file'
  const ascii = cleaned.replace(/[^\u0020-\u007e]|"/g, '_')
  const encoded = encodeURIComponent(cleaned).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  )
  return `${disposition}; filename="${ascii}"; filename*=UTF-8''${encoded}`
}

/** The strong entity tag of a file: its bytes never change after the upload finished. */
export function entityTag(fileId: number, size: number): string {
  return `"${fileId.toString(36)}-${size.toString(36)}"`
}

/** What a Range header asks of a file of `size` bytes. */
export type RangeRequest = { kind: 'whole' } | { kind: 'part'; start: number; end: number } | { kind: 'unsatisfiable' }

/**
 * Reads a Range header (RFC 9110 §14): one `bytes=` range, `a-b`, `a-` or `-n`. Several ranges,
 * another unit or a malformed value are served as the whole file, which the RFC allows; a range
 * that starts past the end is unsatisfiable (416).
 */
export function readRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'whole' }
  const match = /^bytes=(\d{0,16})-(\d{0,16})$/.exec(header.trim())
  if (!match || (match[1] === '' && match[2] === '')) return { kind: 'whole' }
  if (match[1] === '') {
    const suffix = Number(match[2])
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' }
    return { kind: 'part', start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(match[1])
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)
  if (match[2] !== '' && Number(match[2]) < start) return { kind: 'whole' }
  if (start >= size) return { kind: 'unsatisfiable' }
  return { kind: 'part', start, end }
}
