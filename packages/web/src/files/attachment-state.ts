import type { UploadFailure } from './upload-failure.ts'

/**
 * Where one pending attachment is: `uploading` (bytes on their way), `paused` (offline; it goes on
 * when the browser is online again), `failed` (stopped; Resume when `resumable`), `done` (the
 * gateway's file token is there and the file can be sent).
 */
export type AttachmentStatus = 'uploading' | 'paused' | 'failed' | 'done'

/** A file in the composer's tray. */
export interface Attachment {
  /** Local key of the tray entry (never shown). */
  key: string
  name: string
  size: number
  /** The content type the browser gives the file ('' when it knows none). */
  type: string
  status: AttachmentStatus
  /** Bytes the gateway has (as tus-js-client reports them). */
  sent: number
  /** Why it stopped, for `paused` and `failed`. */
  error: string
  resumable: boolean
  /** The gateway's X-File-Token once `done`, sent with the message. */
  token: string
}

export type AttachmentAction =
  | { type: 'added'; key: string; name: string; size: number; mime: string }
  | { type: 'progress'; key: string; sent: number }
  | { type: 'uploaded'; key: string; token: string }
  | { type: 'stopped'; key: string; failure: UploadFailure }
  | { type: 'resumed'; key: string }
  | { type: 'removed'; key: string }

function update(state: Attachment[], key: string, change: (item: Attachment) => Attachment): Attachment[] {
  return state.map((item) => (item.key === key ? change(item) : item))
}

/** The tray's attachments, changed by what the user does and what the uploads report. */
export function attachmentsReducer(state: Attachment[], action: AttachmentAction): Attachment[] {
  switch (action.type) {
    case 'added':
      if (state.some((item) => item.key === action.key)) return state
      return [
        ...state,
        {
          key: action.key,
          name: action.name,
          size: action.size,
          type: action.mime,
          status: 'uploading',
          sent: 0,
          error: '',
          resumable: false,
          token: '',
        },
      ]
    case 'progress':
      return update(state, action.key, (item) =>
        item.status === 'uploading' ? { ...item, sent: Math.min(Math.max(action.sent, 0), item.size) } : item,
      )
    case 'uploaded':
      return update(state, action.key, (item) =>
        item.status === 'done'
          ? item
          : { ...item, status: 'done', sent: item.size, token: action.token, error: '', resumable: false },
      )
    case 'stopped':
      return update(state, action.key, (item) =>
        item.status === 'done'
          ? item
          : {
              ...item,
              status: action.failure.offline ? 'paused' : 'failed',
              error: action.failure.message,
              resumable: action.failure.resumable,
            },
      )
    case 'resumed':
      return update(state, action.key, (item) =>
        (item.status === 'failed' && item.resumable) || item.status === 'paused'
          ? { ...item, status: 'uploading', error: '', resumable: false }
          : item,
      )
    case 'removed':
      return state.filter((item) => item.key !== action.key)
  }
}

/** What the tray allows: sending once every file is up, and what is still going on. */
export function traySummary(state: Attachment[]) {
  const done = state.filter((item) => item.status === 'done')
  const uploading = state.filter((item) => item.status === 'uploading' || item.status === 'paused')
  const failed = state.filter((item) => item.status === 'failed')
  return {
    /** Every attachment is uploaded (and there is at least one). */
    ready: state.length > 0 && done.length === state.length,
    uploading: uploading.length,
    failed: failed.length,
    /** Percent of all bytes of the tray that are up, for one summary line. */
    percent: percentOf(
      state.reduce((sum, item) => sum + item.sent, 0),
      state.reduce((sum, item) => sum + item.size, 0),
    ),
  }
}

/** Whole percent of `sent` in `total`; 100 for an empty file. */
export function percentOf(sent: number, total: number): number {
  if (total <= 0) return 100
  return Math.min(100, Math.floor((sent / total) * 100))
}
