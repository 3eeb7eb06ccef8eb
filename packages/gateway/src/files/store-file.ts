import { ApiError } from '@atrium/platform'
import type { GatewayConfig } from '../config.ts'
import type { FileStorage } from './file-storage.ts'
import { isDeniedType } from './tus-headers.ts'
import { type Upload, UploadState, type Uploads } from './uploads.repository.ts'

export interface FileService {
  uploads: Uploads
  storage: FileStorage
  settings: GatewayConfig['Files']
  now: () => number
}

/** The checks every new file passes before it takes a row: its size and its declared type. */
export function checkNewFile(settings: GatewayConfig['Files'], length: number, contentType: string): void {
  if (length > settings.MaxFileSize) {
    throw new ApiError('UploadTooLarge', `the largest upload is ${settings.MaxFileSize} bytes`, {
      maxBytes: settings.MaxFileSize,
    })
  }
  if (contentType !== '' && isDeniedType(contentType, settings.DeniedContentTypes)) {
    throw new ApiError('FileTypeNotAllowed', `files of type ${contentType} may not be uploaded`, { contentType })
  }
}

/** An upload row under the owner's quota (QuotaExceeded when it would pass Files.QuotaBytes). */
export async function createUploadRow(
  { uploads, settings, now }: FileService,
  file: { crmId: number; length: number; metadata: string; fileName: string; contentType: string },
): Promise<Upload> {
  const upload = await uploads.create({ ...file, expires: now() + settings.ExpirySeconds * 1000 }, settings.QuotaBytes)
  if (!upload) {
    throw new ApiError('QuotaExceeded', `your uploads may take ${settings.QuotaBytes} bytes together`, {
      quotaBytes: settings.QuotaBytes,
    })
  }
  return upload
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes
}

/** Removes files' bytes and then their rows (the order of the sweep, so a crash in between is swept). */
export async function removeFiles({ uploads, storage }: FileService, files: Upload[]): Promise<void> {
  for (const file of files) {
    await storage.remove(file.storage_key)
    await uploads.remove(file.id)
  }
}

/**
 * Stores bytes that arrived whole (not over tus) as a finished file of `crmId`, through the same
 * checks, quota, storage and states as an upload: a row, the bytes staged at offset 0 and
 * committed, the storage sealed, the offset recorded as complete. The file then waits to be
 * attached until Files.ExpirySeconds, as a finished upload does. On any failure what was written
 * is removed again and the error rethrown.
 */
export async function storeFile(
  service: FileService,
  file: { crmId: number; fileName: string; contentType: string; bytes: Uint8Array },
): Promise<Upload> {
  const { storage, uploads, settings, now } = service
  const length = file.bytes.length
  checkNewFile(settings, length, file.contentType)
  const upload = await createUploadRow(service, {
    crmId: file.crmId,
    length,
    metadata: '',
    fileName: file.fileName,
    contentType: file.contentType,
  })
  try {
    await storage.create(upload.storage_key)
    if (length > 0) {
      const staged = await storage.stage(upload.storage_key, 0, once(file.bytes))
      if (staged.bytes !== length) {
        await staged.discard()
        throw new Error(`the storage took ${staged.bytes} of ${length} bytes`)
      }
      await staged.commit()
    }
    await storage.finish(upload.storage_key, length)
    const expires = now() + settings.ExpirySeconds * 1000
    if (!(await uploads.advance(upload, 0, length, expires))) throw new Error(`upload ${upload.id} changed meanwhile`)
    return { ...upload, upload_offset: length, state: UploadState.Finished, expires }
  } catch (error) {
    await removeFiles(service, [upload]).catch(() => {})
    throw error
  }
}
