import { ApiError } from '@atrium/platform'

/** The tus protocol version this gateway speaks (tus 1.0, docs/files.md). */
export const TUS_VERSION = '1.0.0'
/** The tus extensions offered, in OPTIONS' Tus-Extension. */
export const TUS_EXTENSIONS = 'creation,termination,expiration,checksum'
/** The only checksum algorithm offered (Tus-Checksum-Algorithm). */
export const CHECKSUM_ALGORITHM = 'crc32'
/** The content type of a PATCH body. */
export const OFFSET_OCTET_STREAM = 'application/offset+octet-stream'

type Headers = Record<string, string | string[] | undefined>

function single(headers: Headers, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value.join(',') : value
}

/**
 * Refuses a request whose Tus-Resumable is missing or another version with 412, naming the
 * versions this server speaks in Tus-Version as tus 1.0 requires of that answer.
 */
export function checkTusVersion(headers: Headers, reply: { header(name: string, value: string): unknown }): void {
  if (single(headers, 'tus-resumable') !== TUS_VERSION) {
    reply.header('tus-version', TUS_VERSION)
    throw new ApiError('TusVersionUnsupported', `send Tus-Resumable: ${TUS_VERSION}`)
  }
}

/** A non-negative integer header (Upload-Length, Upload-Offset); undefined when absent. */
export function readSizeHeader(headers: Headers, name: string): number | undefined {
  const text = single(headers, name)
  if (text === undefined) return undefined
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(value)) throw new ApiError('InvalidRequest', `${name} must be a non-negative integer`)
  return value
}

export interface UploadMetadata {
  /** The header as sent, returned by HEAD. */
  raw: string
  fileName: string
  contentType: string
}

const METADATA_KEY = /^[\x21-\x2b\x2d-\x7e]+$/
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * Parses Upload-Metadata (`key base64,key base64`). The file name comes from `filename` or
 * `name`, the content type from `filetype` or `type` (the keys tus-js-client and Uppy send).
 */
export function readMetadata(headers: Headers): UploadMetadata {
  const raw = single(headers, 'upload-metadata')?.trim() ?? ''
  const pairs = new Map<string, string>()
  if (raw !== '') {
    for (const pair of raw.split(',')) {
      const [key = '', value = '', ...rest] = pair.trim().split(' ')
      if (!METADATA_KEY.test(key) || !BASE64.test(value) || rest.length > 0 || pairs.has(key)) {
        throw new ApiError('InvalidRequest', 'Upload-Metadata must be comma-separated `key base64value` pairs')
      }
      pairs.set(key, Buffer.from(value, 'base64').toString('utf8'))
    }
  }
  const fileName = pairs.get('filename') ?? pairs.get('name') ?? ''
  const contentType = (pairs.get('filetype') ?? pairs.get('type') ?? '').trim().toLowerCase()
  // PostgreSQL refuses NUL in text; a name with control characters is no name a person gave.
  if (/\p{Cc}/u.test(fileName) || fileName.length > 1024) {
    throw new ApiError('InvalidRequest', 'the file name in Upload-Metadata is too long or has control characters')
  }
  if (!/^([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?$/.test(contentType.split(';')[0]?.trim() ?? '')) {
    throw new ApiError('InvalidRequest', 'the file type in Upload-Metadata is not a content type')
  }
  return { raw, fileName, contentType: contentType.split(';')[0]?.trim() ?? '' }
}

/** True when the content type matches a denied `type/subtype` or `type/*`. */
export function isDeniedType(contentType: string, denied: readonly string[]): boolean {
  const major = contentType.split('/')[0]
  return denied.some((entry) => entry === contentType || (entry.endsWith('/*') && entry.slice(0, -2) === major))
}

/**
 * The CRC32 a PATCH declares in Upload-Checksum (`crc32 <base64 of the 4-byte big-endian CRC>`),
 * or undefined without one. Another algorithm or a malformed value is refused (tus: 400).
 */
export function readChecksum(headers: Headers): number | undefined {
  const text = single(headers, 'upload-checksum')
  if (text === undefined) return undefined
  const [algorithm = '', digest = '', ...rest] = text.trim().split(' ')
  if (algorithm !== CHECKSUM_ALGORITHM || rest.length > 0) {
    throw new ApiError('InvalidRequest', `Upload-Checksum must use ${CHECKSUM_ALGORITHM}, the only algorithm offered`)
  }
  const bytes = BASE64.test(digest) ? Buffer.from(digest, 'base64') : Buffer.alloc(0)
  if (bytes.length !== 4) throw new ApiError('InvalidRequest', 'the crc32 in Upload-Checksum must be 4 bytes in base64')
  return bytes.readUInt32BE(0)
}

/** Upload-Expires: an HTTP date (RFC 9110). */
export function expiresHeader(time: number): string {
  return new Date(time).toUTCString()
}
