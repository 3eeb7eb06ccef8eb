import type { Attachment } from './attachment-state.ts'
import { percentOf } from './attachment-state.ts'
import { fileKind, fileKindIcon } from './file-kind.ts'
import { formatProgress, formatSize } from './file-size.ts'

interface AttachmentTrayProps {
  items: Attachment[]
  onCancel: (key: string) => void
  onResume: (key: string) => void
}

function statusText(item: Attachment): string {
  if (item.status === 'done') return `${formatSize(item.size)} · ready to send`
  if (item.status === 'uploading')
    return `${formatProgress(item.sent, item.size)} · ${percentOf(item.sent, item.size)}%`
  return item.sent > 0 ? `${item.error} ${formatProgress(item.sent, item.size)} sent.` : item.error
}

/**
 * The files waiting to be sent with the next message, each with its name, size and a progress bar;
 * Cancel ends an upload (or drops a finished one), Resume goes on after a failure.
 */
export function AttachmentTray({ items, onCancel, onResume }: AttachmentTrayProps) {
  if (items.length === 0) return null
  return (
    <ul class="attachment-tray" aria-label="Attachments">
      {items.map((item) => {
        const stopped = item.status === 'failed' || item.status === 'paused'
        return (
          <li key={item.key} class={`attachment attachment-${item.status}`} data-attachment={item.name}>
            <span class="file-icon" aria-hidden="true">
              {fileKindIcon(fileKind(item.type, item.name))}
            </span>
            <span class="attachment-name" title={item.name}>
              {item.name}
            </span>
            <progress
              class="attachment-progress"
              max={Math.max(item.size, 1)}
              value={item.size === 0 && item.status === 'done' ? 1 : item.sent}
              aria-label={`Upload of ${item.name}`}
            />
            <span
              class={stopped ? 'attachment-status stopped' : 'attachment-status'}
              role={stopped ? 'alert' : undefined}
            >
              {statusText(item)}
            </span>
            <span class="attachment-buttons">
              {item.status === 'failed' && item.resumable && (
                <button
                  type="button"
                  class="secondary"
                  onClick={() => onResume(item.key)}
                  aria-label={`Resume ${item.name}`}
                >
                  Resume
                </button>
              )}
              <button
                type="button"
                class="secondary"
                onClick={() => onCancel(item.key)}
                aria-label={`${item.status === 'done' || item.status === 'failed' ? 'Remove' : 'Cancel'} ${item.name}`}
              >
                {item.status === 'done' || item.status === 'failed' ? 'Remove' : 'Cancel'}
              </button>
            </span>
          </li>
        )
      })}
    </ul>
  )
}
