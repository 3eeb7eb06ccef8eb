import type { FileCatalogClient } from './file-catalog-client.ts'
import type { FileStorage } from './file-storage.ts'
import type { Upload, Uploads } from './uploads.repository.ts'

const BATCH = 100

/**
 * Time a finished upload is kept past its expiry before the chat module is asked whether it was
 * attached: a send_message that verified the token just before the expiry has committed by then.
 */
export const ATTACH_GRACE_MS = 5 * 60_000

export interface FileSweepOptions {
  uploads: Uploads
  storage: FileStorage
  /** The chat module's file catalogue; without one, no finished upload can be on a message. */
  catalog: FileCatalogClient | undefined
  now: () => number
}

/** How many uploads a sweep removed, by reason. */
export interface FileSweepReport {
  /** Unfinished uploads past their expiry. */
  expired: number
  /** Finished uploads that no message named by the end of their time to be attached. */
  unattached: number
  /** Files whose last message was hard-deleted. */
  released: number
}

/** Bytes first and then the row, so a crash in between leaves a row that the next sweep finds again. */
async function removeAll(uploads: Uploads, storage: FileStorage, doomed: Upload[]): Promise<void> {
  for (const upload of doomed) {
    await storage.remove(upload.storage_key)
    await uploads.remove(upload.id)
  }
}

/**
 * The file service's periodic clean-up (docs/files.md, "Lifecycle"): unfinished uploads past
 * their expiry; finished uploads never attached to a message; and the files of hard-deleted
 * messages that no other message (a forward) still names. What the chat module is asked is
 * answered from its database at that moment, so a release and a forward of the same file cannot
 * remove bytes a message still shows.
 */
export async function sweepFiles({ uploads, storage, catalog, now }: FileSweepOptions): Promise<FileSweepReport> {
  const report: FileSweepReport = { expired: 0, unattached: 0, released: 0 }
  while (true) {
    const expired = await uploads.listExpired(BATCH)
    await removeAll(uploads, storage, expired)
    report.expired += expired.length
    if (expired.length < BATCH) break
  }

  const deadline = now() - ATTACH_GRACE_MS
  while (true) {
    const unclaimed = await uploads.listUnclaimed(deadline, BATCH)
    const named = catalog ? await catalog.referenced(unclaimed.map((upload) => upload.id)) : new Set<number>()
    await uploads.markAttached([...named])
    const doomed = unclaimed.filter((upload) => !named.has(upload.id))
    await removeAll(uploads, storage, doomed)
    report.unattached += doomed.length
    if (unclaimed.length < BATCH) break
  }

  if (!catalog) return report
  while (true) {
    const releases = await catalog.releases(BATCH)
    const fileIds = [...new Set(releases.map((release) => release.fileId))]
    const named = await catalog.referenced(fileIds)
    const doomed = await uploads.listFiles(fileIds.filter((id) => !named.has(id)))
    await removeAll(uploads, storage, doomed)
    await catalog.acknowledge(releases.map((release) => release.id))
    report.released += doomed.length
    if (releases.length < BATCH) break
  }
  return report
}
