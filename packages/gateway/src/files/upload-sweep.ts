import type { FileStorage } from './file-storage.ts'
import type { Uploads } from './uploads.repository.ts'

const BATCH = 100

/**
 * Removes unfinished uploads past their expiry, bytes first and then the row, so a crash in
 * between leaves a row the next sweep finds again. Returns how many were removed.
 */
export async function sweepExpiredUploads(uploads: Uploads, storage: FileStorage): Promise<number> {
  let removed = 0
  while (true) {
    const expired = await uploads.listExpired(BATCH)
    for (const upload of expired) {
      await storage.remove(upload.storage_key)
      await uploads.remove(upload.id)
    }
    removed += expired.length
    if (expired.length < BATCH) return removed
  }
}
