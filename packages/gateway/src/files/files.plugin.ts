import { ApiError, FILE_TOKEN_HEADER, signFileToken } from '@atrium/platform'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type Caller, isAuthenticated } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import { readChunkBody } from './chunk-body.ts'
import type { FileCatalogClient } from './file-catalog-client.ts'
import type { FileStorage } from './file-storage.ts'
import { checkNewFile, createUploadRow } from './store-file.ts'
import {
  CHECKSUM_ALGORITHM,
  checkTusVersion,
  expiresHeader,
  OFFSET_OCTET_STREAM,
  readChecksum,
  readMetadata,
  readSizeHeader,
  TUS_EXTENSIONS,
  TUS_VERSION,
} from './tus-headers.ts'
import { type Upload, UploadState, type Uploads } from './uploads.repository.ts'

export interface FilesPluginOptions {
  uploads: Uploads
  storage: FileStorage
  settings: GatewayConfig['Files']
  /** ServiceSecret: signs the file token of a finished upload for the chat module. */
  serviceSecret: string
  /** The chat module's file catalogue; undefined when no module holds file metadata. */
  catalog: FileCatalogClient | undefined
  now: () => number
}

/** The uploader's CRM id: only a signed-in user (session or user API key) uploads; guests have no session here. */
function uploaderOf(caller: Caller): number {
  if (!isAuthenticated(caller)) throw new ApiError('SessionRequired', 'sign in to upload files')
  if (caller.crmId === 0 || (caller.keyType !== 'session' && caller.keyType !== 'user')) {
    throw new ApiError('Forbidden', 'uploads belong to users; an app or service credential cannot upload')
  }
  return caller.crmId
}

function uploadIdOf(request: FastifyRequest): number {
  const { id } = request.params as { id: string }
  if (!/^\d{1,16}$/.test(id)) throw new ApiError('UploadNotFound')
  return Number(id)
}

/**
 * Resumable uploads over tus 1.0 with the creation, termination, expiration and checksum (crc32)
 * extensions (docs/files.md). Each chunk streams to the storage and becomes part of the upload
 * only once its CRC32 matches its Upload-Checksum; the offset is then committed in the gateway
 * database, so an upload resumes from its last good offset, after a restart too. Only the owner
 * sees an upload: any other caller gets UploadNotFound, exactly as for a missing one.
 */
export default async function filesPlugin(
  app: FastifyInstance,
  { uploads, storage, settings, serviceSecret, catalog, now }: FilesPluginOptions,
) {
  // PATCH bodies stream to the storage as they arrive; the chunk limit is enforced while reading.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
  // One writer per upload in this process; the offset's compare-and-set guards across processes.
  const writing = new Set<number>()

  app.addHook('onRequest', async function tusHeaders(request, reply) {
    reply.header('tus-resumable', TUS_VERSION).header('cache-control', 'no-store')
    if (request.method === 'OPTIONS') return
    uploaderOf(request.caller)
    checkTusVersion(request.headers, reply)
  })

  function expiry(): number {
    return now() + settings.ExpirySeconds * 1000
  }

  /** The caller's live upload; an expired one is gone even before the sweep removes it. */
  async function ownUpload(request: FastifyRequest): Promise<Upload> {
    const upload = await uploads.findOwn(uploadIdOf(request), request.caller.crmId)
    if (!upload) throw new ApiError('UploadNotFound')
    if (upload.state === UploadState.Uploading && upload.expires <= now()) throw new ApiError('UploadGone')
    return upload
  }

  /**
   * The offset and, while unfinished, the expiry; a finished upload that is not attached yet also
   * gets its file token, with which send_message attaches it until the upload's expiry.
   */
  function describe(reply: FastifyReply, upload: Upload) {
    reply.header('upload-offset', String(upload.upload_offset))
    if (upload.state === UploadState.Uploading) reply.header('upload-expires', expiresHeader(upload.expires))
    if (upload.state === UploadState.Finished && upload.expires > now()) {
      const claim = {
        id: upload.id,
        owner: upload.crm_id,
        name: upload.file_name,
        size: upload.upload_length,
        type: upload.content_type,
        expires: upload.expires,
      }
      reply.header(FILE_TOKEN_HEADER, signFileToken(serviceSecret, claim))
    }
  }

  const hidden = { schema: { hide: true }, config: { envelope: false } }

  app.options('/uploads', hidden, async function tusOptions(_request, reply) {
    return reply
      .code(204)
      .header('tus-version', TUS_VERSION)
      .header('tus-extension', TUS_EXTENSIONS)
      .header('tus-max-size', String(settings.MaxFileSize))
      .header('tus-checksum-algorithm', CHECKSUM_ALGORITHM)
      .send()
  })

  app.post('/uploads', hidden, async function createUpload(request, reply) {
    const { headers } = request
    if (headers['upload-defer-length'] !== undefined || headers['upload-concat'] !== undefined) {
      throw new ApiError('UploadLengthRequired', 'deferred lengths and concatenation are not supported')
    }
    const length = readSizeHeader(headers, 'upload-length')
    if (length === undefined) throw new ApiError('UploadLengthRequired')
    const metadata = readMetadata(headers)
    checkNewFile(settings, length, metadata.contentType)
    const crmId = request.caller.crmId
    const upload = await createUploadRow(
      { uploads, storage, settings, now },
      { crmId, length, metadata: metadata.raw, ...metadata },
    )
    try {
      await storage.create(upload.storage_key)
      // An empty file is complete as soon as it exists.
      if (length === 0) {
        await storage.finish(upload.storage_key, 0)
        await uploads.advance(upload, 0, 0, upload.expires)
        upload.state = UploadState.Finished
      }
    } catch (error) {
      await uploads.remove(upload.id)
      throw error
    }
    describe(reply, upload)
    return reply.code(201).header('location', `${app.prefix}/uploads/${upload.id}`).send()
  })

  app.head('/uploads/:id', hidden, async function uploadOffset(request, reply) {
    const upload = await ownUpload(request)
    describe(reply, upload)
    reply.header('upload-length', String(upload.upload_length))
    if (upload.metadata !== '') reply.header('upload-metadata', upload.metadata)
    return reply.code(200).send()
  })

  app.patch('/uploads/:id', hidden, async function appendChunk(request, reply) {
    const id = uploadIdOf(request)
    if (request.headers['content-type']?.split(';')[0]?.trim().toLowerCase() !== OFFSET_OCTET_STREAM) {
      throw new ApiError('UnsupportedMediaType', `a chunk is sent as ${OFFSET_OCTET_STREAM}`)
    }
    const offset = readSizeHeader(request.headers, 'upload-offset')
    if (offset === undefined) throw new ApiError('InvalidRequest', 'Upload-Offset is required')
    const declared = readChecksum(request.headers)
    if (declared === undefined && settings.RequireChecksum) {
      throw new ApiError('InvalidRequest', `this gateway requires Upload-Checksum (${CHECKSUM_ALGORITHM})`)
    }
    // Ownership first, so that a stranger learns nothing from UploadLocked; the row is read again
    // under the lock, since a chunk may have been committed in between.
    await ownUpload(request)
    if (writing.has(id)) throw new ApiError('UploadLocked')
    writing.add(id)
    try {
      const upload = await ownUpload(request)
      if (offset !== upload.upload_offset) {
        throw new ApiError('UploadOffsetMismatch', `the upload is at offset ${upload.upload_offset}`)
      }
      const limit = Math.min(settings.MaxChunkSize, upload.upload_length - offset)
      const contentLength = readSizeHeader(request.headers, 'content-length')
      if (contentLength !== undefined && contentLength > limit) {
        throw new ApiError('UploadTooLarge', `this chunk may have at most ${limit} bytes`)
      }
      // The parsed body, not request.raw: a body of unknown length reaches us through the
      // bandwidth meter's stream (rate-limits.ts), which has already taken it from the request.
      const body = readChunkBody(request.body as AsyncIterable<Uint8Array> | undefined, limit)
      const staged = await storage.stage(upload.storage_key, offset, body.bytes)
      // A chunk that broke off can be kept only when nothing vouches for it (tus: keep what was
      // received); with a checksum it cannot be verified, so it is dropped.
      if ((body.interrupted && declared !== undefined) || staged.bytes === 0) {
        await staged.discard()
        return reply.code(204).header('upload-offset', String(offset)).send()
      } else if (declared !== undefined && declared !== body.crc32) {
        await staged.discard()
        throw new ApiError('ChecksumMismatch')
      } else {
        await staged.commit()
      }
      const to = offset + staged.bytes
      if (to === upload.upload_length && upload.state === UploadState.Uploading) {
        await storage.finish(upload.storage_key, upload.upload_length)
      }
      const expires = expiry()
      if (!(await uploads.advance(upload, offset, to, expires))) {
        throw new ApiError('UploadGone', 'the upload ended while this chunk arrived')
      }
      const state = to === upload.upload_length ? UploadState.Finished : UploadState.Uploading
      describe(reply, { ...upload, upload_offset: to, expires, state })
      return reply.code(204).send()
    } finally {
      writing.delete(id)
    }
  })

  // Termination ends an upload, or a finished file no message names yet (the composer's remove).
  app.delete('/uploads/:id', hidden, async function terminateUpload(request, reply) {
    const upload = await uploads.findOwn(uploadIdOf(request), request.caller.crmId)
    if (!upload) throw new ApiError('UploadNotFound')
    if (writing.has(upload.id)) throw new ApiError('UploadLocked')
    if (upload.state === UploadState.Finished && catalog && (await catalog.referenced([upload.id])).size > 0) {
      await uploads.markAttached([upload.id])
      upload.state = UploadState.Attached
    }
    if (upload.state === UploadState.Attached) {
      throw new ApiError('FileAttached', 'this file is on a message; delete the message to remove it')
    }
    await storage.remove(upload.storage_key)
    await uploads.remove(upload.id)
    return reply.code(204).send()
  })
}
