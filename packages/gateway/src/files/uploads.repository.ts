import type { DatabaseDialect, TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import { lockHolder } from '../db/holder-lock.ts'
import type { GatewayDatabase, UploadsTable } from '../db/schema.ts'

export type Upload = UploadsTable

/**
 * Upload states: bytes still arriving; all of them verified (only then is it a file), waiting to
 * be attached until `expires`; attached, as the chat module confirmed, so kept until released.
 */
export const UploadState = { Uploading: 'uploading', Finished: 'finished', Attached: 'attached' } as const

/** A finished upload is a file, attached or not. */
export function isFile(upload: Upload): boolean {
  return upload.state === UploadState.Finished || upload.state === UploadState.Attached
}

export interface NewUpload {
  crmId: number
  length: number
  metadata: string
  fileName: string
  contentType: string
  expires: number
}

/**
 * The uploads' state in the gateway database, so an upload survives a restart. The offset only
 * moves forward by a compare-and-set on the offset it was read at, so two writers can never both
 * commit a chunk at one offset.
 */
export function createUploads(
  db: Kysely<GatewayDatabase>,
  dialect: DatabaseDialect,
  nextTick: TimetickGenerator,
  now: () => number = Date.now,
) {
  return {
    /**
     * Creates an upload unless the user's uploads (finished or not) would then exceed `quota`
     * bytes (0: no quota); returns undefined when refused. Parallel creations of one user take
     * turns (holder-lock.ts), so together they never pass the quota.
     */
    async create(upload: NewUpload, quota: number): Promise<Upload | undefined> {
      return db.transaction().execute(async (trx) => {
        await lockHolder(trx, dialect, `uploads:${upload.crmId}`)
        if (quota > 0) {
          const { used } = await trx
            .selectFrom('uploads')
            .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('upload_length'), eb.lit(0)).as('used'))
            .where('crm_id', '=', upload.crmId)
            .executeTakeFirstOrThrow()
          if (Number(used) + upload.length > quota) return undefined
        }
        const id = nextTick()
        const time = now()
        return trx
          .insertInto('uploads')
          .values({
            id,
            crm_id: upload.crmId,
            upload_length: upload.length,
            upload_offset: 0,
            metadata: upload.metadata,
            file_name: upload.fileName,
            content_type: upload.contentType,
            storage_key: String(id),
            state: UploadState.Uploading,
            expires: upload.expires,
            created: time,
            updated: time,
          })
          .returningAll()
          .executeTakeFirstOrThrow()
      })
    },

    /** The user's upload by id; undefined for a missing one and for another user's. */
    async findOwn(id: number, crmId: number): Promise<Upload | undefined> {
      return db.selectFrom('uploads').selectAll().where('id', '=', id).where('crm_id', '=', crmId).executeTakeFirst()
    },

    /**
     * Moves the offset from `from` to `to` (finishing the upload when `to` is its length) and sets
     * the new expiry (for a finished upload: the time by which it must be attached); false when the
     * row is no longer at `from` or no longer uploading.
     */
    async advance(upload: Upload, from: number, to: number, expires: number): Promise<boolean> {
      const finished = to === upload.upload_length
      const result = await db
        .updateTable('uploads')
        .set({
          upload_offset: to,
          state: finished ? UploadState.Finished : UploadState.Uploading,
          expires,
          updated: now(),
        })
        .where('id', '=', upload.id)
        .where('upload_offset', '=', from)
        .where('state', '=', UploadState.Uploading)
        .executeTakeFirst()
      return result.numUpdatedRows === 1n
    },

    /** A finished upload by id, whoever uploaded it; undefined when there is none. */
    async findFile(id: number): Promise<Upload | undefined> {
      const upload = await db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst()
      return upload && isFile(upload) ? upload : undefined
    },

    /** Marks finished uploads as attached: the chat module named them on a message. */
    async markAttached(ids: number[]): Promise<void> {
      if (ids.length === 0) return
      await db
        .updateTable('uploads')
        .set({ state: UploadState.Attached, expires: 0, updated: now() })
        .where('id', 'in', ids)
        .where('state', '=', UploadState.Finished)
        .execute()
    },

    /** Finished, unattached uploads whose time to be attached ended before `before`, oldest first. */
    async listUnclaimed(before: number, limit: number): Promise<Upload[]> {
      return db
        .selectFrom('uploads')
        .selectAll()
        .where('state', '=', UploadState.Finished)
        .where('expires', '<=', before)
        .orderBy('expires')
        .limit(limit)
        .execute()
    },

    /** Finished uploads among `ids`, attached or not. */
    async listFiles(ids: number[]): Promise<Upload[]> {
      if (ids.length === 0) return []
      return db
        .selectFrom('uploads')
        .selectAll()
        .where('id', 'in', ids)
        .where('state', 'in', [UploadState.Finished, UploadState.Attached])
        .execute()
    },

    /** Deletes the upload's row. */
    async remove(id: number): Promise<void> {
      await db.deleteFrom('uploads').where('id', '=', id).execute()
    },

    /** Unfinished uploads whose expiry has passed, oldest first, at most `limit`. */
    async listExpired(limit: number): Promise<Upload[]> {
      return db
        .selectFrom('uploads')
        .selectAll()
        .where('state', '=', UploadState.Uploading)
        .where('expires', '<=', now())
        .orderBy('expires')
        .limit(limit)
        .execute()
    },
  }
}

export type Uploads = ReturnType<typeof createUploads>
