import { useLayoutEffect, useRef } from 'preact/hooks'
import type { FileView } from '../api/chat-types.ts'
import { formatSize } from './file-size.ts'

interface ImagePreviewProps {
  file: FileView
  /** The image's address (the file URL, or a guest's blob URL). */
  src: string
  /** Where "Download" leads, and the name it saves under. */
  downloadHref: string
  onClose: () => void
}

/**
 * An image at full size over the page, in a modal <dialog>: the browser keeps the keyboard in it,
 * Escape closes it, and focus returns to the thumbnail that opened it. It offers a download.
 */
export function ImagePreview({ file, src, downloadHref, onClose }: ImagePreviewProps) {
  const dialog = useRef<HTMLDialogElement>(null)

  useLayoutEffect(() => {
    const element = dialog.current
    if (!element) return
    const opener = document.activeElement as HTMLElement | null
    element.showModal()
    return () => {
      if (element.open) element.close()
      opener?.focus()
    }
  }, [])

  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: a backdrop click is the mouse's Escape; the keyboard has Escape and Close
    <dialog
      ref={dialog}
      class="image-preview"
      aria-label={`Image ${file.name}`}
      onCancel={(event) => {
        event.preventDefault()
        onClose()
      }}
      onClick={(event) => {
        // A click on the backdrop (the dialog itself, outside its content) closes it.
        if (event.target === dialog.current) onClose()
      }}
    >
      <div class="image-preview-bar">
        <span class="file-name" title={file.name}>
          {file.name}
        </span>
        <span class="file-size">{formatSize(file.size)}</span>
        <a class="button-link" href={downloadHref} download={file.name}>
          Download
        </a>
        <button type="button" class="secondary" onClick={onClose} aria-label="Close preview">
          ✕
        </button>
      </div>
      <img class="image-preview-image" src={src} alt={file.name} />
    </dialog>
  )
}
