import type { ErrorName } from '@atrium/platform/errors'
import { errorName, RequestError } from '../api/envelope.ts'
import { wordsFor } from '../api/failure-words.ts'

/** Why an upload stopped, in words for the person, and whether it can go on from where it stopped. */
export interface UploadFailure {
  message: string
  /** The upload can continue (Resume); false when trying again cannot help (quota, size, type, signed out). */
  resumable: boolean
  /** The browser is offline: the upload goes on by itself when the connection is back. */
  offline: boolean
  /** The error code's name from the envelope, '' when there was none. */
  kind: ErrorName | ''
}

/** Refusals that the same file will meet again: the person has to change something first. */
const FINAL: ReadonlySet<ErrorName> = new Set<ErrorName>([
  'QuotaExceeded',
  'UploadTooLarge',
  'FileTypeNotAllowed',
  'SessionRequired',
  'Unauthenticated',
  'Forbidden',
])

function envelopeError(body: string): { code: number; message: string; details: unknown } | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown; details?: unknown } }
    const { code, message, details } = parsed.error ?? {}
    if (typeof code === 'number' && typeof message === 'string' && message) return { code, message, details }
  } catch {
    // Not an envelope (a proxy's page, an empty body): described by its status below.
  }
  return undefined
}

/**
 * Reads a failed tus request (docs/files.md, Errors): its status (0 when no answer arrived) and body.
 * The gateway answers failures in the envelope, whose code picks the words (failure-words.ts).
 */
export function uploadFailure(status: number, body: string, online = true): UploadFailure {
  if (!online) {
    return {
      message: 'You are offline. The upload goes on when the connection is back.',
      resumable: true,
      offline: true,
      kind: '',
    }
  }
  if (status === 0) {
    return { message: 'The connection was interrupted.', resumable: true, offline: false, kind: '' }
  }
  const error = envelopeError(body)
  const kind = error ? (errorName(error.code) ?? '') : ''
  if (kind === 'SessionRequired' || kind === 'Unauthenticated') {
    return { message: 'You were signed out. Sign in again to upload.', resumable: false, offline: false, kind }
  }
  const message =
    error && kind
      ? wordsFor(new RequestError(kind, error.message, { code: error.code, status, details: error.details }))
      : status >= 500
        ? `The server had a problem (${status}). Resume the upload in a moment.`
        : `The upload was refused (${status}).`
  return { message, resumable: !(kind && FINAL.has(kind)), offline: false, kind }
}

/** A failure that is not an HTTP answer (a token missing from the last answer, an exception). */
export function uploadProblem(message: string): UploadFailure {
  return { message, resumable: true, offline: false, kind: '' }
}

/**
 * Whether tus-js-client should send a failed request again by itself: not while offline (the
 * upload pauses instead); yes for no answer, a conflict or lock (409, 423), a rate limit (429), a
 * checksum mismatch (460: the chunk arrived damaged and was dropped, so sending it again is the
 * cure) and server errors; never for a refusal the same request meets again.
 */
export function shouldRetryUpload(status: number, online: boolean): boolean {
  if (!online) return false
  return status === 0 || status === 409 || status === 423 || status === 429 || status === 460 || status >= 500
}
