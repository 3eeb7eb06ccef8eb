import { useState } from 'preact/hooks'
import type { FileView } from '../api/chat-types.ts'
import { FileCard } from './file-card.tsx'
import { fileKind } from './file-kind.ts'
import { formatSize } from './file-size.ts'
import { fileDownloadUrl, fileUrl } from './file-urls.ts'
import { ImagePreview } from './image-preview.tsx'

interface ImageThumbnailProps {
  file: FileView
  src: string
  downloadHref: string
}

/** An image as a thumbnail bounded by CSS, loaded lazily; it opens the preview. */
export function ImageThumbnail({ file, src, downloadHref }: ImageThumbnailProps) {
  const [open, setOpen] = useState(false)
  return (
    <>
      <button
        type="button"
        class="file-thumbnail"
        data-file-id={file.id}
        aria-label={`Open image ${file.name}, ${formatSize(file.size)}`}
        onClick={() => setOpen(true)}
      >
        <img src={src} alt={file.name} loading="lazy" decoding="async" />
      </button>
      {open && <ImagePreview file={file} src={src} downloadHref={downloadHref} onClose={() => setOpen(false)} />}
    </>
  )
}

/**
 * A message's file for a signed-in member: an image as a thumbnail that opens a preview, any other
 * file as a card with a download link. The session cookie goes along with <img> and <a> by itself.
 */
export function FileAttachment({ file }: { file: FileView }) {
  const download = fileDownloadUrl(file.id)
  if (fileKind(file.type, file.name) === 'image') {
    return <ImageThumbnail file={file} src={fileUrl(file.id)} downloadHref={download} />
  }
  return (
    <FileCard file={file}>
      <a class="button-link" href={download} download={file.name} aria-label={`Download ${file.name}`}>
        Download
      </a>
    </FileCard>
  )
}
