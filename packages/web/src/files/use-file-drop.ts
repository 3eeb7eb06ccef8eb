import { useRef, useState } from 'preact/hooks'

/** True when a drag carries files (not text or a link being dragged within the page). */
function carriesFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes('Files')
}

/**
 * Drop handling for an element that takes files: `dragging` while files are held over it, and
 * `onFiles` with what is dropped. Nested elements fire enter and leave in pairs, hence the count.
 */
export function useFileDrop(onFiles: ((files: File[]) => void) | undefined) {
  const [dragging, setDragging] = useState(false)
  const depth = useRef(0)
  if (!onFiles) return { dragging: false, handlers: {} }
  const handlers = {
    onDragEnter(event: DragEvent) {
      if (!carriesFiles(event)) return
      event.preventDefault()
      depth.current += 1
      setDragging(true)
    },
    onDragOver(event: DragEvent) {
      if (!carriesFiles(event)) return
      event.preventDefault()
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy'
    },
    onDragLeave(event: DragEvent) {
      if (!carriesFiles(event)) return
      depth.current = Math.max(0, depth.current - 1)
      if (depth.current === 0) setDragging(false)
    },
    onDrop(event: DragEvent) {
      if (!carriesFiles(event)) return
      event.preventDefault()
      depth.current = 0
      setDragging(false)
      const files = Array.from(event.dataTransfer?.files ?? [])
      if (files.length > 0) onFiles(files)
    },
  }
  return { dragging, handlers }
}
