import type { DetailedError, HttpResponse, Upload } from 'tus-js-client'
import { checksummingStack } from './checksum-stack.ts'
import { shouldRetryUpload, type UploadFailure, uploadFailure, uploadProblem } from './upload-failure.ts'

/** The gateway's tus endpoint (docs/files.md). */
export const UPLOADS_ENDPOINT = '/auth/v1/uploads'
/** Delays of tus-js-client's automatic retries before an upload is reported as stopped. */
const RETRY_DELAYS = [0, 1000, 3000, 5000]
/** The header of the final PATCH (or HEAD of a finished upload) naming the file for send_message. */
const FILE_TOKEN = 'X-File-Token'

/** What an upload reports to the tray. */
export interface UploadEvents {
  onProgress: (sent: number, total: number) => void
  onSuccess: (token: string) => void
  onFailure: (failure: UploadFailure) => void
}

/** One running upload. */
export interface UploadHandle {
  /** Goes on from the gateway's offset after a failure or a pause. */
  resume: () => void
  /** Stops sending; the upload stays on the gateway and in the fingerprint store, to be resumed. */
  pause: () => void
  /** Stops and ends the upload on the gateway (tus termination); its bytes are removed. */
  cancel: () => Promise<void>
}

export interface UploaderOptions {
  /** The session's CSRF token now (the gateway requires it on POST, PATCH and DELETE of a cookie session). */
  csrfToken: () => string
  /** Reads the session's CSRF token again (after a CsrfRejected answer). */
  refreshCsrf: () => Promise<unknown>
  deviceGuid: string
  /** The signed-in user, part of the fingerprint so that another user of this browser never resumes it. */
  owner: string
  /** Bytes per PATCH (client config `files.chunkSize`): small enough to lose little on a break, large enough for few round trips. */
  chunkSize: number
  endpoint?: string
}

export type Uploader = (file: File, events: UploadEvents) => UploadHandle

/** tus-js-client's status of a failed request; 0 when no answer arrived. */
function statusOf(error: Error): { status: number; body: string } {
  const response = (error as Partial<DetailedError>).originalResponse as HttpResponse | null | undefined
  return response ? { status: response.getStatus(), body: response.getBody() ?? '' } : { status: 0, body: '' }
}

/**
 * Uploads files to the gateway with tus-js-client (loaded on the first upload, so it is not part of
 * the start-up bundle): chunks of 5 MiB with a CRC32 each, retried on a break, a 460 checksum
 * mismatch, a lock or a server error; resumable after a reload, since tus-js-client keeps each
 * unfinished upload's URL in localStorage under the file's fingerprint.
 */
export function createUploader({
  csrfToken,
  refreshCsrf,
  deviceGuid,
  owner,
  chunkSize,
  endpoint = UPLOADS_ENDPOINT,
}: UploaderOptions): Uploader {
  const headers = () => ({ 'X-CSRF-Token': csrfToken(), 'X-Device-Guid': deviceGuid })

  return function upload(file: File, events: UploadEvents): UploadHandle {
    let current: Upload | undefined
    let stopped = false
    let csrfRefreshed = false

    async function begin() {
      const tus = await import('tus-js-client')
      if (stopped) return
      const created: Upload = new tus.Upload(file, {
        endpoint,
        chunkSize,
        retryDelays: RETRY_DELAYS,
        metadata: { filename: file.name, filetype: file.type || 'application/octet-stream' },
        fingerprint: async (source) =>
          ['atrium', owner, source.name, source.type, source.size, source.lastModified, endpoint].join('/'),
        removeFingerprintOnSuccess: true,
        httpStack: checksummingStack(new tus.DefaultHttpStack({}), headers),
        onShouldRetry: (error) => shouldRetryUpload(statusOf(error).status, navigator.onLine !== false),
        onProgress: (sent, total) => events.onProgress(sent, total),
        onSuccess({ lastResponse }) {
          const token = lastResponse.getHeader(FILE_TOKEN)
          if (token) events.onSuccess(token)
          else events.onFailure(uploadProblem('The server kept the file but did not say how to attach it. Try again.'))
        },
        onError(error) {
          const { status, body } = statusOf(error)
          const failure = uploadFailure(status, body, navigator.onLine !== false)
          if (failure.kind === 'CsrfRejected' && !csrfRefreshed) {
            // The session changed in another tab: read the token again and go on once.
            csrfRefreshed = true
            refreshCsrf().then(
              () => created.start(),
              () => events.onFailure(failure),
            )
            return
          }
          events.onFailure(failure)
        },
      })
      current = created
      const previous = await created.findPreviousUploads()
      if (stopped) return
      if (previous[0]) created.resumeFromPreviousUpload(previous[0])
      created.start()
    }

    function run() {
      stopped = false
      const started = current ? Promise.resolve(current.start()) : begin()
      started.catch((error: unknown) => events.onFailure(uploadProblem(`The upload could not start: ${String(error)}`)))
    }

    run()
    return {
      resume: run,
      pause() {
        stopped = true
        current?.abort(false)
      },
      async cancel() {
        stopped = true
        try {
          await current?.abort(true)
        } catch {
          // Already gone on the gateway, or offline: the sweep removes an unfinished upload in time.
        }
      },
    }
  }
}
