import type { Readable } from 'node:stream'
import { ApiError, DEVICE_GUID_PATTERN } from '@atrium/platform'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { type Caller, isAuthenticated } from '../auth/caller.ts'
import { contentDisposition, entityTag, isInlineType, readRange, servedType } from './download-headers.ts'
import type { CatalogReader, FileCatalogClient } from './file-catalog-client.ts'
import { FileMissingError, type FileStorage } from './file-storage.ts'
import type { Upload, Uploads } from './uploads.repository.ts'

export interface DownloadsPluginOptions {
  uploads: Uploads
  storage: FileStorage
  /** The chat module's file catalogue; undefined when no module holds file metadata. */
  catalog: FileCatalogClient | undefined
}

/** Scope of operators, who may download any chat's file by message id (spec "Authentication" 6, 10). */
export const OPERATOR_SCOPE = 'admin'

const ID = /^[1-9][0-9]{0,15}$/
const DEVICE_GUID = new RegExp(DEVICE_GUID_PATTERN)

/** The signed-in user reading a file: a session or user API key, never an app or service credential. */
function readerOf(caller: Caller): number {
  if (!isAuthenticated(caller)) throw new ApiError('SessionRequired', 'sign in to download files')
  if (caller.crmId === 0) throw new ApiError('Forbidden', 'files are downloaded by users; an app credential cannot')
  return caller.crmId
}

function idOf(text: string): number {
  if (!ID.test(text)) throw new ApiError('FileNotFound')
  return Number(text)
}

const download = Type.Optional(
  Type.String({ description: 'Present (e.g. `download=1`): always `Content-Disposition: attachment`.' }),
)
const fileAnswers = {
  200: {
    description:
      'The file: `Content-Type` is the declared type (or application/octet-stream), `Content-Disposition` inline only for pictures, audio, video and plain text, with ETag, nosniff and a sandboxing CSP.',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  },
  206: {
    description: 'One byte range (`Range: bytes=a-b`), with Content-Range.',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  },
  304: { description: 'If-None-Match named the current ETag.', type: 'null' },
}

const byIdSchema = {
  summary: 'Download a file by its id',
  description:
    'For the uploader, and for members of a chat with a message that carries the file (the message’s `file.id`). Every other reader gets FileNotFound (404). See docs/files.md.',
  params: Type.Object({ id: Type.String({ description: 'The file id.' }) }),
  querystring: Type.Object({ download }),
  response: fileAnswers,
}

const byMessageSchema = {
  summary: 'Download the file of a message, or a guest’s by invite code',
  description:
    'Without `message`: `{ref}` is a message id, for members of its chat and operators (`admin` scope). With `message`: `{ref}` is an invite code and the guest of that code on the device in `X-Device-Guid` reads the file of that message of their chat, without a session. See docs/files.md.',
  params: Type.Object({ ref: Type.String({ description: 'A message id, or an invite code (with `message`).' }) }),
  querystring: Type.Object({
    message: Type.Optional(Type.String({ description: 'The message id, for the guest form.' })),
    download,
  }),
  response: fileAnswers,
}

/** What the download serves: the stored file and what the message says about it. */
interface Served {
  upload: Upload
  name: string
  type: string
}

/**
 * Downloads (docs/files.md, "Downloads"): the bytes live here, the right to read them is the chat
 * module's to answer. Every refusal that could tell whether a file exists (no such id, another
 * chat's file, not a member, a deleted message, a revoked guest) is the same FileNotFound.
 *
 * - `GET /auth/v1/file/{id}`: a signed-in user's own upload, or a file on a message in one of their chats.
 * - `GET /auth/v2/file/{messageTimetick}`: the file of a message, for its chat's members and operators.
 * - `GET /auth/v2/file/{code}?message={id}` with `X-Device-Guid`: a guest's, by invite code.
 */
export default async function downloadsPlugin(
  app: FastifyInstance,
  { uploads, storage, catalog }: DownloadsPluginOptions,
) {
  async function fromCatalog(
    selector: { fileId: number } | { messageId: number },
    reader: CatalogReader,
  ): Promise<Served> {
    const file = catalog && (await catalog.access(selector, reader))
    const upload = file && (await uploads.findFile(file.fileId))
    if (!file || !upload) throw new ApiError('FileNotFound')
    return { upload, name: file.name, type: file.type }
  }

  app.get(
    '/v1/file/:id',
    { schema: byIdSchema, config: { envelope: false } },
    async function downloadById(request, reply) {
      const crmId = readerOf(request.caller)
      const fileId = idOf((request.params as { id: string }).id)
      // The uploader reads their own file without asking the chat module, attached or not.
      const own = await uploads.findFile(fileId)
      const served =
        own && own.crm_id === crmId
          ? { upload: own, name: own.file_name, type: own.content_type }
          : await fromCatalog({ fileId }, { member: crmId })
      return serve(request, reply, served)
    },
  )

  app.get(
    '/v2/file/:ref',
    { schema: byMessageSchema, config: { envelope: false } },
    async function downloadByMessage(request, reply) {
      const { ref } = request.params as { ref: string }
      const { message } = request.query as { message?: string }
      if (message === undefined) {
        // The raw message id form: members of the message's chat, and operators.
        const crmId = readerOf(request.caller)
        const reader = request.caller.scopes.includes(OPERATOR_SCOPE) ? { operator: true as const } : { member: crmId }
        return serve(request, reply, await fromCatalog({ messageId: idOf(ref) }, reader))
      }
      // The guest form: the invite code and this device name the guest, the query the message.
      const deviceGuid = request.headers['x-device-guid']
      if (typeof deviceGuid !== 'string' || !DEVICE_GUID.test(deviceGuid)) {
        throw new ApiError('InvalidRequest', 'a guest download needs the X-Device-Guid header of the joined device')
      }
      if (!/^[A-Za-z0-9]{1,128}$/.test(ref)) throw new ApiError('FileNotFound')
      return serve(request, reply, await fromCatalog({ messageId: idOf(message) }, { code: ref, deviceGuid }))
    },
  )

  /** Answers with the file: whole or one range, revalidated by ETag, never as active content. */
  async function serve(request: FastifyRequest, reply: FastifyReply, { upload, name, type }: Served) {
    const size = upload.upload_length
    const etag = entityTag(upload.id, size)
    // Access is checked on every request: a browser may keep the bytes, but asks again before use.
    reply.header('etag', etag).header('cache-control', 'private, no-cache').header('accept-ranges', 'bytes')
    if (request.headers['if-none-match']?.split(',').some((tag) => tag.trim() === etag)) {
      return reply.code(304).send()
    }
    const ifRange = request.headers['if-range']
    const range =
      ifRange !== undefined && ifRange !== etag ? { kind: 'whole' as const } : readRange(request.headers.range, size)
    if (range.kind === 'unsatisfiable') {
      reply.header('content-range', `bytes */${size}`)
      throw new ApiError('RangeNotSatisfiable', `this file has ${size} bytes`)
    }
    const part = range.kind === 'part' ? { start: range.start, end: range.end } : undefined
    let body: Readable | string
    try {
      // An empty file has no byte to open a range of.
      body = size === 0 ? '' : await storage.open(upload.storage_key, part)
    } catch (error) {
      if (error instanceof FileMissingError) {
        request.log.error({ fileId: upload.id }, 'a finished upload has no bytes in the file storage')
        throw new ApiError('FileNotFound')
      }
      throw error
    }
    const served = servedType(type)
    const asked = (request.query as { download?: string }).download
    const disposition = isInlineType(served) && asked === undefined ? 'inline' : 'attachment'
    reply
      .header('content-type', served)
      .header('content-disposition', contentDisposition(disposition, name))
      .header('x-content-type-options', 'nosniff')
      // Whatever a file holds, it runs nothing and reaches nothing on this origin.
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cross-origin-resource-policy', 'same-origin')
    if (part) {
      reply.code(206).header('content-range', `bytes ${part.start}-${part.end}/${size}`)
      reply.header('content-length', String(part.end - part.start + 1))
    } else {
      reply.code(200).header('content-length', String(size))
    }
    return reply.send(body)
  }
}
