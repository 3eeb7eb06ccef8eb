import { ApiError, DEVICE_GUID_PATTERN, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import { Id, MemberId } from '../messages/messages.schema.ts'
import type { Store } from '../store.ts'
import type { FileReader, FileSelector } from './file-catalog.ts'

export interface FilesPluginOptions {
  store: Store
}

const FileAccess = Type.Object({
  file_id: Type.String(),
  message_id: Type.String(),
  chat_id: Type.String(),
  name: Type.String(),
  size: Type.Integer(),
  type: Type.String(),
})

const accessQuery = Type.Object(
  {
    file_id: Type.Optional(Id),
    message_id: Type.Optional(Id),
    member: Type.Optional(MemberId),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    device_guid: Type.Optional(Type.String({ pattern: DEVICE_GUID_PATTERN })),
    operator: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
const IdList = Type.Array(Id, { maxItems: 500 })

/**
 * The file catalogue for the gateway (/private/v1/files, docs/files.md): who may download a file,
 * which files messages still name, and the files of hard-deleted messages. The caller is trusted
 * by its inter-service signature; the reader it names is checked against the chat's members.
 */
export default async function filesPlugin(app: Service, { store }: FilesPluginOptions) {
  const catalog = store.files

  async function readerOf(query: {
    member?: string
    code?: string
    device_guid?: string
    operator?: boolean
  }): Promise<FileReader | undefined> {
    const named = [query.member !== undefined, query.code !== undefined, query.operator === true]
    if (named.filter(Boolean).length !== 1) {
      throw new ApiError('InvalidRequest', 'name exactly one reader: member, code with device_guid, or operator')
    }
    if (query.operator) return { operator: true }
    if (query.member !== undefined) return { member: Number(query.member) }
    if (query.device_guid === undefined) throw new ApiError('InvalidRequest', 'a code needs its device_guid')
    // A revoked invite has no guest any more (invites.repository.ts), so its files are closed too.
    const guest = await store.invites.findGuest(query.code!, query.device_guid)
    return guest && { member: guest.timetick }
  }

  app.get('/files/access', { schema: { querystring: accessQuery, response: { 200: FileAccess } } }, async (request) => {
    const { file_id, message_id } = request.query
    if ((file_id === undefined) === (message_id === undefined)) {
      throw new ApiError('InvalidRequest', 'give file_id or message_id')
    }
    const selector: FileSelector =
      file_id !== undefined ? { fileId: Number(file_id) } : { messageId: Number(message_id) }
    const reader = await readerOf(request.query)
    const file = reader && (await catalog.find(selector, reader))
    if (!file) throw new ApiError('FileNotFound')
    return {
      file_id: String(file.file_id),
      message_id: String(file.message_id),
      chat_id: String(file.chat_id),
      name: file.file_name,
      size: file.file_size,
      type: file.file_type,
    }
  })

  app.post(
    '/files/referenced',
    {
      schema: {
        body: Type.Object({ file_ids: IdList }, { additionalProperties: false }),
        response: { 200: Type.Object({ referenced: Type.Array(Type.String()) }) },
      },
    },
    async (request) => {
      const referenced = await catalog.referenced(request.body.file_ids.map(Number))
      return { referenced: referenced.map(String) }
    },
  )

  app.get(
    '/files/released',
    {
      schema: {
        querystring: Type.Object(
          { limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ releases: Type.Array(Type.Object({ id: Type.String(), file_id: Type.String() })) }),
        },
      },
    },
    async (request) => {
      const releases = await catalog.releases(request.query.limit)
      return {
        releases: releases.map((release) => ({ id: String(release.timetick), file_id: String(release.file_id) })),
      }
    },
  )

  app.post(
    '/files/released/ack',
    {
      schema: {
        body: Type.Object({ ids: IdList }, { additionalProperties: false }),
        response: { 200: Type.Object({ acknowledged: Type.Integer() }) },
      },
    },
    async (request) => {
      await catalog.acknowledge(request.body.ids.map(Number))
      return { acknowledged: request.body.ids.length }
    },
  )
}
