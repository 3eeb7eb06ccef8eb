import type { ComponentChildren } from 'preact'
import type { FileView } from '../api/chat-types.ts'
import { fileKind, fileKindIcon, fileKindLabel } from './file-kind.ts'
import { formatSize } from './file-size.ts'

interface FileCardProps {
  file: FileView
  /** The way to get the file: a download link or button, shown after the size. */
  children: ComponentChildren
}

/** A file that is not shown as an image: an icon by its kind, its name, its size, and how to download it. */
export function FileCard({ file, children }: FileCardProps) {
  const kind = fileKind(file.type, file.name)
  return (
    <div class="file-card" data-file-id={file.id}>
      <span class="file-icon" role="img" aria-label={fileKindLabel(kind)}>
        {fileKindIcon(kind)}
      </span>
      <span class="file-facts">
        <span class="file-name" title={file.name}>
          {file.name}
        </span>
        <span class="file-meta-line">
          <span class="file-size">{formatSize(file.size)}</span>
          {children}
        </span>
      </span>
    </div>
  )
}
