import { useEffect, useState } from 'preact/hooks'
import type { FileView } from '../api/chat-types.ts'
import { failureText } from '../api/envelope.ts'
import { ImageThumbnail } from './file-attachment.tsx'
import { FileCard } from './file-card.tsx'
import { fileKind } from './file-kind.ts'

/** Images up to this size are fetched for a thumbnail as soon as a guest's message shows. */
const THUMBNAIL_LIMIT = 15 * 1024 * 1024

interface GuestFileProps {
  file: FileView
  /** Fetches the file's bytes as the guest (invite code and X-Device-Guid). */
  load: () => Promise<Blob>
}

/** Saves `blob` under `name` through a temporary link, as a download. */
function saveBlob(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

/**
 * A message's file for a guest. Guests have no session cookie, so <img> and <a href> cannot fetch
 * it: the bytes are fetched with the guest's headers and offered as a blob URL (docs/files.md).
 */
export function GuestFile({ file, load }: GuestFileProps) {
  const image = fileKind(file.type, file.name) === 'image' && file.size <= THUMBNAIL_LIMIT
  const [imageUrl, setImageUrl] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')

  useEffect(() => {
    if (!image) return
    let url = ''
    let gone = false
    load()
      .then((blob) => {
        if (gone) return
        url = URL.createObjectURL(blob)
        setImageUrl(url)
      })
      .catch((failure) => setError(failureText(failure)))
    return () => {
      gone = true
      if (url) URL.revokeObjectURL(url)
    }
  }, [file.id])

  async function download() {
    setBusy(true)
    setError('')
    try {
      saveBlob(await load(), file.name)
    } catch (failure) {
      setError(failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  if (image && imageUrl) return <ImageThumbnail file={file} src={imageUrl} downloadHref={imageUrl} />
  return (
    <FileCard file={file}>
      <button type="button" class="secondary" disabled={busy} onClick={download} aria-label={`Download ${file.name}`}>
        {busy ? 'Downloading…' : 'Download'}
      </button>
      {error && (
        <span class="form-error" role="alert">
          {error}
        </span>
      )}
    </FileCard>
  )
}
