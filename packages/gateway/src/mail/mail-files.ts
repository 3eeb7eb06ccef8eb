import { ApiError } from '@atrium/platform'
import type { Attachment } from 'mailparser'
import type { GatewayConfig } from '../config.ts'
import { checkNewFile, type FileService, removeFiles, storeFile } from '../files/store-file.ts'
import type { Upload } from '../files/uploads.repository.ts'
import type { Refusal } from './mail-auth.ts'

/** A refusal the SMTP client gets as the reply to DATA. */
export class SmtpRefusal extends Error {
  responseCode: number
  constructor({ responseCode, message }: Refusal) {
    super(message)
    this.responseCode = responseCode
  }
}

/** A mail attachment as it will be stored: a clean name, a valid type and its decoded bytes. */
export interface MailFile {
  name: string
  type: string
  bytes: Buffer
}

/** The file of a chat message, as ReceiveEmail takes it. */
export interface StoredMailFile {
  id: string
  name: string
  size: number
  type: string
}

const MAX_NAME = 255
const CONTENT_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters never belong in a file name
const NAME_CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g

/**
 * A file name a person can see and save: one line without control characters (NUL among them),
 * path separators replaced, at most 255 characters (whole code points, a long name keeping its
 * extension), never `.` or `..`; a
 * part without a name gets `attachment-<n>` (with `.eml` for an attached message).
 */
export function mailFileName(raw: string | undefined, index: number, type: string): string {
  const clean = (raw ?? '').replace(NAME_CONTROL, ' ').replace(/[/\\]/g, '_').replace(/\s+/g, ' ').trim()
  const points = Array.from(clean)
  // A name cut short keeps its extension (up to 16 characters), so the file still opens as what it is.
  const extension = /\.[^.\s]{1,16}$/.exec(clean)?.[0] ?? ''
  const name =
    points.length <= MAX_NAME
      ? clean
      : `${points
          .slice(0, MAX_NAME - Array.from(extension).length)
          .join('')
          .trim()}${extension}`
  if (name !== '' && name !== '.' && name !== '..') return name
  return `attachment-${index + 1}${type === 'message/rfc822' ? '.eml' : ''}`
}

/**
 * The attachments of an accepted mail, checked against the bridge's limits before anything is
 * stored: at most MailBridge.MaxAttachments of them and MaxAttachmentBytes together, each within
 * Files.MaxFileSize and of a type Files.DeniedContentTypes allows. Inline parts (`cid:` pictures of
 * the HTML) and attached messages (`message/rfc822`, stored as `.eml`) are files like the rest.
 */
export function mailFiles(
  attachments: Attachment[],
  bridge: GatewayConfig['MailBridge'],
  files: GatewayConfig['Files'],
): MailFile[] {
  if (attachments.length > bridge.MaxAttachments)
    throw new SmtpRefusal({
      responseCode: 552,
      message: `5.3.4 The message has ${attachments.length} attachments; at most ${bridge.MaxAttachments} are taken`,
    })
  let total = 0
  return attachments.map((part, index) => {
    const declared = (part.contentType ?? '').split(';')[0]!.trim().toLowerCase()
    const type = CONTENT_TYPE.test(declared) ? declared : 'application/octet-stream'
    const name = mailFileName(part.filename, index, type)
    total += part.content.length
    if (total > bridge.MaxAttachmentBytes)
      throw new SmtpRefusal({
        responseCode: 552,
        message: `5.3.4 The attachments exceed ${bridge.MaxAttachmentBytes} bytes together`,
      })
    try {
      checkNewFile(files, part.content.length, type)
    } catch (error) {
      throw refusalOf(error, name)
    }
    return { name, type, bytes: part.content }
  })
}

/** What a refusal of the file service means to the sending server. */
function refusalOf(error: unknown, name: string): unknown {
  if (!(error instanceof ApiError)) return error
  const shown = JSON.stringify(name)
  switch (error.name) {
    case 'UploadTooLarge':
      return new SmtpRefusal({
        responseCode: 552,
        message: `5.3.4 The attachment ${shown} is too large: ${error.message}`,
      })
    case 'FileTypeNotAllowed':
      return new SmtpRefusal({ responseCode: 550, message: `5.6.1 The attachment ${shown}: ${error.message}` })
    case 'QuotaExceeded':
      // The addressed person may make room, so the sending server is asked to try again later.
      return new SmtpRefusal({
        responseCode: 452,
        message: '4.2.2 The attachments do not fit in the storage quota of this address; try again later',
      })
    default:
      return error
  }
}

/**
 * Stores the files through the file service under `crmId`'s quota, all or none: when one fails
 * (a quota, the storage), the files stored before it are removed again and the failure rethrown
 * (as an SMTP refusal when it is one).
 */
export async function storeMailFiles(service: FileService, crmId: number, files: MailFile[]): Promise<Upload[]> {
  const stored: Upload[] = []
  try {
    for (const file of files) {
      stored.push(
        await storeFile(service, { crmId, fileName: file.name, contentType: file.type, bytes: file.bytes }).catch(
          (error: unknown) => {
            throw refusalOf(error, file.name)
          },
        ),
      )
    }
    return stored
  } catch (error) {
    await removeFiles(service, stored)
    throw error
  }
}

/** The chat message's view of a stored file. */
export function describeFiles(stored: Upload[]): StoredMailFile[] {
  return stored.map((file) => ({
    id: String(file.id),
    name: file.file_name,
    size: file.upload_length,
    type: file.content_type,
  }))
}
