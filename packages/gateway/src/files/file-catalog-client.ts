import { ApiError, signedHeaders } from '@atrium/platform'
import type { ModuleInstances } from '../proxy/module-instances.ts'

/** A file a reader may download, as the chat module's catalogue describes it. */
export interface CatalogFile {
  fileId: number
  messageId: number
  chatId: number
  name: string
  size: number
  type: string
}

/** Who reads: a user or guest member (a guest by invite code and device), or an operator. */
export type CatalogReader = { member: number } | { code: string; deviceGuid: string } | { operator: true }

export interface FileCatalogClientOptions {
  /** The instances of the module that holds file metadata (Files.CatalogModule). */
  instances: ModuleInstances
  serviceSecret: string
  /** Time one call may take. */
  timeoutMs?: number
}

const CALL_TIMEOUT_MS = 10_000

/**
 * The gateway's calls to the chat module's file catalogue (/private/v1/files, docs/files.md),
 * signed like every hop. The module answers who may read a file and which files its messages
 * still name; the gateway holds the bytes. A module that cannot be reached or answers anything
 * unexpected is BadGateway (502), never a refusal, so the caller knows to retry.
 */
export function createFileCatalogClient({
  instances,
  serviceSecret,
  timeoutMs = CALL_TIMEOUT_MS,
}: FileCatalogClientOptions) {
  const base = instances.url.replace(/\/+$/, '')

  async function call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; result: unknown }> {
    const url = `${base}/private/v1/files/${path}`
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' }
    let response: Response
    try {
      response = await instances.fetch(url, {
        method,
        headers: signedHeaders(serviceSecret, method, url, headers),
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (error) {
      throw new ApiError('BadGateway', 'the file catalogue (chat module) could not be reached', {
        cause: String(error),
      })
    }
    const text = await response.text().catch(() => '')
    let parsed: { result?: unknown; error?: { code?: number } } | undefined
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    if (!parsed) throw new ApiError('BadGateway', `the file catalogue answered ${response.status} without JSON`)
    return { status: response.status, result: response.ok ? parsed.result : parsed.error }
  }

  return {
    /** The file `reader` may download, by file id or message id; undefined when refused. */
    async access(
      selector: { fileId: number } | { messageId: number },
      reader: CatalogReader,
    ): Promise<CatalogFile | undefined> {
      const query = new URLSearchParams(
        'fileId' in selector ? { file_id: String(selector.fileId) } : { message_id: String(selector.messageId) },
      )
      if ('member' in reader) query.set('member', String(reader.member))
      else if ('code' in reader) {
        query.set('code', reader.code)
        query.set('device_guid', reader.deviceGuid)
      } else query.set('operator', 'true')
      const { status, result } = await call('GET', `access?${query}`)
      // A malformed code or device GUID is refused by the catalogue's schema: for the reader, no such file.
      if (status === 404 || status === 400) return undefined
      if (status !== 200) throw new ApiError('BadGateway', `the file catalogue answered ${status}`)
      const file = result as Record<'file_id' | 'message_id' | 'chat_id' | 'name' | 'size' | 'type', unknown>
      return {
        fileId: Number(file.file_id),
        messageId: Number(file.message_id),
        chatId: Number(file.chat_id),
        name: String(file.name),
        size: Number(file.size),
        type: String(file.type),
      }
    },

    /** Those of `fileIds` that some message still names. */
    async referenced(fileIds: number[]): Promise<Set<number>> {
      if (fileIds.length === 0) return new Set()
      const { status, result } = await call('POST', 'referenced', { file_ids: fileIds.map(String) })
      if (status !== 200) throw new ApiError('BadGateway', `the file catalogue answered ${status}`)
      return new Set((result as { referenced: string[] }).referenced.map(Number))
    },

    /** The oldest files of hard-deleted messages, each with the id its acknowledgement names. */
    async releases(limit: number): Promise<{ id: string; fileId: number }[]> {
      const { status, result } = await call('GET', `released?limit=${limit}`)
      if (status !== 200) throw new ApiError('BadGateway', `the file catalogue answered ${status}`)
      return (result as { releases: { id: string; file_id: string }[] }).releases.map((release) => ({
        id: release.id,
        fileId: Number(release.file_id),
      }))
    },

    /** Tells the catalogue that these releases are handled. */
    async acknowledge(ids: string[]): Promise<void> {
      if (ids.length === 0) return
      const { status } = await call('POST', 'released/ack', { ids })
      if (status !== 200) throw new ApiError('BadGateway', `the file catalogue answered ${status}`)
    },
  }
}

export type FileCatalogClient = ReturnType<typeof createFileCatalogClient>
