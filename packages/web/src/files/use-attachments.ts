import { useEffect, useReducer, useRef } from 'preact/hooks'
import { type Attachment, attachmentsReducer, traySummary } from './attachment-state.ts'
import type { Uploader, UploadHandle } from './uploader.ts'

/** Files in the tray at once, as in Slack: more is a batch better sent in a few messages. */
export const MAX_ATTACHMENTS = 10

/** The composer's pending attachments and what the tray, the drop zone and paste do with them. */
export interface AttachmentsControl {
  items: Attachment[]
  summary: ReturnType<typeof traySummary>
  /** Adds files and starts their uploads; answers a sentence for the person when some were left out. */
  add: (files: Iterable<File>) => string
  /** Stops an upload, ends it on the gateway and removes it from the tray. */
  cancel: (key: string) => void
  resume: (key: string) => void
  /** The file was sent in a message: it leaves the tray, and its upload stays as the message's file. */
  sent: (key: string) => void
}

let counter = 0

/**
 * The pending attachments of one conversation's composer. Uploads start as soon as a file is
 * added; one paused by going offline goes on by itself when the browser is online again. Leaving
 * the conversation pauses the running uploads: attaching the same file again resumes it.
 */
export function useAttachments(uploader: Uploader): AttachmentsControl {
  const [items, dispatch] = useReducer(attachmentsReducer, [])
  const handles = useRef(new Map<string, UploadHandle>())
  const latest = useRef(items)
  latest.current = items

  function add(files: Iterable<File>): string {
    const list = [...files]
    const room = Math.max(0, MAX_ATTACHMENTS - latest.current.length)
    for (const file of list.slice(0, room)) {
      counter += 1
      const key = `attachment-${counter}`
      dispatch({ type: 'added', key, name: file.name || 'Pasted file', size: file.size, mime: file.type })
      const handle = uploader(file, {
        onProgress: (sent) => dispatch({ type: 'progress', key, sent }),
        onSuccess: (token) => dispatch({ type: 'uploaded', key, token }),
        onFailure: (failure) => dispatch({ type: 'stopped', key, failure }),
      })
      handles.current.set(key, handle)
    }
    return list.length > room ? `Up to ${MAX_ATTACHMENTS} files at a time; the others were not attached.` : ''
  }

  function cancel(key: string) {
    handles.current.get(key)?.cancel()
    handles.current.delete(key)
    dispatch({ type: 'removed', key })
  }

  function resume(key: string) {
    dispatch({ type: 'resumed', key })
    handles.current.get(key)?.resume()
  }

  function sent(key: string) {
    handles.current.delete(key)
    dispatch({ type: 'removed', key })
  }

  useEffect(() => {
    function online() {
      for (const item of latest.current) if (item.status === 'paused') resume(item.key)
    }
    window.addEventListener('online', online)
    return () => window.removeEventListener('online', online)
  }, [])

  useEffect(
    () => () => {
      for (const handle of handles.current.values()) handle.pause()
    },
    [],
  )

  return { items, summary: traySummary(items), add, cancel, resume, sent }
}
